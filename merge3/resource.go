package merge3

import (
	"strings"

	"go.yaml.in/yaml/v3"
)

// kpt's rename tracking: the annotation holds "group|Kind|namespace|name" of
// the resource as upstream named it; older kpt wrote a line comment on the
// metadata key, "# kpt-merge: namespace/name".
const (
	upstreamIdentifier = "internal.kpt.dev/upstream-identifier"
	mergeCommentPrefix = "kpt-merge:"
)

// resource is one KRM document of a package.
type resource struct {
	file  *pkgFile
	doc   *yaml.Node // the document node
	node  *yaml.Node // its root map
	id    string     // the identity it is matched by across the three versions
	title string     // "apps/v1 Deployment default/web", for messages
}

// identity returns a resource's own identity: group|Kind|namespace|name, the
// namespace "default" when unset, as kpt writes it.
func identity(node *yaml.Node) (id, title string) {
	apiVersion, kind := scalar(lookup(node, "apiVersion")), scalar(lookup(node, "kind"))
	meta := lookup(node, "metadata")
	ns, name := scalar(lookup(meta, "namespace")), scalar(lookup(meta, "name"))
	group := ""
	if slash := strings.LastIndexByte(apiVersion, '/'); slash >= 0 {
		group = apiVersion[:slash]
	}
	title = apiVersion + " " + kind + " " + name
	if ns != "" {
		title = apiVersion + " " + kind + " " + ns + "/" + name
	}
	if ns == "" {
		ns = "default"
	}
	return group + "|" + kind + "|" + ns + "|" + name, title
}

// originIdentity is the identity a resource had upstream: from kpt's
// annotation, else from its kpt-merge comment, else its own.
func originIdentity(node *yaml.Node) string {
	own, _ := identity(node)
	meta := lookup(node, "metadata")
	if v := scalar(lookup(lookup(meta, "annotations"), upstreamIdentifier)); strings.Count(v, "|") == 3 {
		parts := strings.Split(v, "|")
		if parts[2] == "" {
			parts[2] = "default"
		}
		return strings.Join(parts, "|")
	}
	if ns, name, ok := mergeComment(node); ok {
		parts := strings.SplitN(own, "|", 3)
		if ns == "" {
			ns = "default"
		}
		return parts[0] + "|" + parts[1] + "|" + ns + "|" + name
	}
	return own
}

// mergeComment reads "# kpt-merge: ns/name" from the metadata key.
func mergeComment(node *yaml.Node) (ns, name string, ok bool) {
	for i := 0; i+1 < len(node.Content); i += 2 {
		k := node.Content[i]
		if k.Value != "metadata" {
			continue
		}
		c := strings.TrimSpace(strings.TrimPrefix(k.LineComment, "#"))
		if !strings.HasPrefix(c, mergeCommentPrefix) {
			return "", "", false
		}
		ns, name, ok = strings.Cut(strings.TrimSpace(strings.TrimPrefix(c, mergeCommentPrefix)), "/")
		return ns, name, ok
	}
	return "", "", false
}

func scalar(n *yaml.Node) string {
	if n == nil || n.Kind != yaml.ScalarNode {
		return ""
	}
	return n.Value
}

// annotate adds kpt's rename-tracking marks to a resource that has none; it
// reports whether it changed anything.
func annotate(node *yaml.Node) bool {
	meta := lookup(node, "metadata")
	if meta == nil || meta.Kind != yaml.MappingNode {
		return false
	}
	changed := false
	id, _ := identity(node)
	annotations := lookup(meta, "annotations")
	if annotations == nil {
		annotations = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
		meta.Content = append(meta.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: "annotations"}, annotations)
	}
	if lookup(annotations, upstreamIdentifier) == nil && annotations.Kind == yaml.MappingNode {
		annotations.Content = append(annotations.Content,
			&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: upstreamIdentifier},
			&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: id, Style: yaml.SingleQuotedStyle})
		changed = true
	}
	if _, _, ok := mergeComment(node); !ok {
		parts := strings.Split(id, "|")
		ns := scalar(lookup(meta, "namespace"))
		for i := 0; i+1 < len(node.Content); i += 2 {
			if k := node.Content[i]; k.Value == "metadata" && k.LineComment == "" {
				k.LineComment = "# " + mergeCommentPrefix + " " + ns + "/" + parts[3]
				changed = true
			}
		}
	}
	return changed
}

// withoutTracking returns a copy of a resource without kpt's rename-tracking
// annotation, so that a resource kpt annotated compares equal to its
// unannotated upstream.
func withoutTracking(node *yaml.Node) *yaml.Node {
	c := deepCopy(node)
	meta := lookup(c, "metadata")
	annotations := lookup(meta, "annotations")
	if annotations == nil {
		return c
	}
	for i := 0; i+1 < len(annotations.Content); i += 2 {
		if annotations.Content[i].Value == upstreamIdentifier {
			annotations.Content = append(annotations.Content[:i], annotations.Content[i+2:]...)
			break
		}
	}
	if len(annotations.Content) == 0 {
		for i := 0; i+1 < len(meta.Content); i += 2 {
			if meta.Content[i].Value == "annotations" {
				meta.Content = append(meta.Content[:i], meta.Content[i+2:]...)
				break
			}
		}
	}
	return c
}

// sameResource compares two resources, ignoring kpt's rename tracking.
func sameResource(a, b *yaml.Node) bool {
	return same(withoutTracking(a), withoutTracking(b))
}
