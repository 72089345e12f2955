package pkgupdate

import "go.yaml.in/yaml/v3"

// The helpers below read and edit a YAML mapping node in place, so that
// everything else in the tree (comments, key order, unknown fields) stays.

// deref follows an alias to the node it names.
func deref(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}

// isNull reports whether n is absent or an explicit null.
func isNull(n *yaml.Node) bool {
	n = deref(n)
	return n == nil || (n.Kind == yaml.ScalarNode && n.Tag == "!!null")
}

// mapGet returns the value of key in mapping m, or nil.
func mapGet(m *yaml.Node, key string) *yaml.Node {
	m = deref(m)
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return deref(m.Content[i+1])
		}
	}
	return nil
}

// mapString returns the scalar value at path under m, or "".
func mapString(m *yaml.Node, path ...string) string {
	for _, key := range path {
		m = mapGet(m, key)
	}
	if m == nil || m.Kind != yaml.ScalarNode || m.Tag == "!!null" {
		return ""
	}
	return m.Value
}

// mapSet sets key in mapping m to value. An existing key keeps its place
// and comments; a new key goes right after the last of the keys in after
// that m holds, or at the end.
func mapSet(m *yaml.Node, key string, value *yaml.Node, after ...string) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content[i+1] = value
			return
		}
	}
	at := -1
	for _, a := range after {
		for i := 0; i+1 < len(m.Content); i += 2 {
			if m.Content[i].Value == a && i+2 > at {
				at = i + 2
			}
		}
	}
	if at < 0 {
		at = len(m.Content)
	}
	k := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key}
	m.Content = append(m.Content[:at:at], append([]*yaml.Node{k, value}, m.Content[at:]...)...)
}

// mapDelete removes key from mapping m.
func mapDelete(m *yaml.Node, key string) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content = append(m.Content[:i], m.Content[i+2:]...)
			return
		}
	}
}

// mapChild returns the mapping at key in m, creating it (placed after the
// keys in after) when it is missing or null.
func mapChild(m *yaml.Node, key string, after ...string) *yaml.Node {
	if c := mapGet(m, key); c != nil && c.Kind == yaml.MappingNode {
		return c
	}
	c := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	mapSet(m, key, c, after...)
	return c
}

// setString sets key in m to a string scalar, or deletes it when value is
// empty (the Kptfile's omitempty fields). An existing scalar keeps its style
// and comments.
func setString(m *yaml.Node, key, value string, after ...string) {
	if value == "" {
		mapDelete(m, key)
		return
	}
	if old := mapGet(m, key); old != nil && old.Kind == yaml.ScalarNode {
		old.Value, old.Tag = value, "!!str"
		return
	}
	mapSet(m, key, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: value}, after...)
}
