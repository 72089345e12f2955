package merge3

import (
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/stratadev/strata/strategicpatch"
)

func isMap(n *yaml.Node) bool  { return n != nil && n.Kind == yaml.MappingNode }
func isList(n *yaml.Node) bool { return n != nil && n.Kind == yaml.SequenceNode }

// same reports whether two optional values are equal, absent equalling absent.
func same(a, b *yaml.Node) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return strategicpatch.YAMLEqual(a, b)
}

func lookup(m *yaml.Node, key string) *yaml.Node {
	if !isMap(m) {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// mapIndex finds a map's values by key: by scanning small maps, through a
// Go map built once for large ones, so merging a map stays linear.
type mapIndex struct {
	n     *yaml.Node
	index map[string]*yaml.Node
}

func indexMap(n *yaml.Node) mapIndex {
	x := mapIndex{n: n}
	if isMap(n) && len(n.Content) > 32 {
		x.index = make(map[string]*yaml.Node, len(n.Content)/2)
		for i := len(n.Content) - 2; i >= 0; i -= 2 {
			x.index[n.Content[i].Value] = n.Content[i+1] // the first of duplicates wins, as in lookup
		}
	}
	return x
}

func (x mapIndex) get(key string) *yaml.Node {
	if x.index != nil {
		return x.index[key]
	}
	return lookup(x.n, key)
}

func deepCopy(n *yaml.Node) *yaml.Node {
	if n == nil {
		return nil
	}
	c := *n
	if len(n.Content) > 0 {
		c.Content = make([]*yaml.Node, len(n.Content))
		for i, ch := range n.Content {
			c.Content[i] = deepCopy(ch)
		}
	}
	return &c
}

// shallowCopy copies a container without its content.
func shallowCopy(n *yaml.Node) *yaml.Node {
	c := *n
	c.Content = make([]*yaml.Node, 0, len(n.Content))
	return &c
}

// styled copies upstream's value u to stand where local had l: a scalar keeps
// l's comments when u has none, and l's quotes when both are strings.
func styled(u, l *yaml.Node) *yaml.Node {
	c := deepCopy(u)
	if c == nil || l == nil {
		return c
	}
	if c.HeadComment == "" && c.LineComment == "" && c.FootComment == "" {
		c.HeadComment, c.LineComment, c.FootComment = l.HeadComment, l.LineComment, l.FootComment
	}
	if c.Kind == yaml.ScalarNode && l.Kind == yaml.ScalarNode && c.ShortTag() == "!!str" && l.ShortTag() == "!!str" &&
		l.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) != 0 {
		c.Style = l.Style
	}
	return c
}

// oneLine renders a value as one line of flow YAML for reports.
func oneLine(n *yaml.Node) string {
	if n == nil {
		return "<absent>"
	}
	c := deepCopy(n)
	flow(c)
	out, err := yaml.Marshal(c)
	if err != nil {
		return "<unprintable>"
	}
	return strings.TrimSpace(string(out))
}

func flow(n *yaml.Node) {
	n.HeadComment, n.LineComment, n.FootComment = "", "", ""
	if n.Kind == yaml.MappingNode || n.Kind == yaml.SequenceNode {
		n.Style = yaml.FlowStyle
	}
	for _, c := range n.Content {
		flow(c)
	}
}

// listIndex is a list's elements by identity.
type listIndex struct {
	ids   []string
	items map[string]*yaml.Node
}

func (x listIndex) get(id string) *yaml.Node { return x.items[id] }

// indexList identifies every element of list n; ok is false when one cannot
// be identified or two share an identity.
func indexList(n *yaml.Node, identify func(*yaml.Node) (string, bool)) (listIndex, bool) {
	x := listIndex{items: map[string]*yaml.Node{}}
	if n == nil {
		return x, true
	}
	for _, item := range n.Content {
		id, ok := identify(item)
		if !ok {
			return x, false
		}
		if _, dup := x.items[id]; dup {
			return x, false
		}
		x.ids = append(x.ids, id)
		x.items[id] = item
	}
	return x, true
}

// elementName names a list element in paths: its "name" field when it has
// one, else its identity.
func elementName(id string, items ...*yaml.Node) string {
	for _, it := range items {
		if v := lookup(it, "name"); v != nil && v.Kind == yaml.ScalarNode {
			return "name=" + v.Value
		}
	}
	return strings.Trim(id, `"`)
}
