package strategicpatch

import (
	"math"
	"strconv"

	"go.yaml.in/yaml/v3"

	"github.com/stratadev/strata/schema"
)

// MaxYAMLNodes bounds the size of a YAML document with its aliases expanded,
// so that an alias bomb is rejected instead of exhausting memory.
const MaxYAMLNodes = 1 << 20

// yamlReader reads yaml.Node trees. Aliases read as the node they name.
type yamlReader struct{}

func resolve(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	if n.Kind == yaml.DocumentNode && len(n.Content) == 1 {
		return resolve(n.Content[0])
	}
	return n
}

func (yamlReader) kind(n *yaml.Node) Kind {
	n = resolve(n)
	switch n.Kind {
	case yaml.MappingNode:
		return Map
	case yaml.SequenceNode:
		return List
	case yaml.ScalarNode:
		switch n.ShortTag() {
		case "!!null":
			return Null
		case "!!bool":
			return Bool
		case "!!int", "!!float":
			return Number
		}
		return String
	}
	return Null
}

func (yamlReader) members(n *yaml.Node, fn func(key string, keyNode, val *yaml.Node) bool) {
	n = resolve(n)
	for i := 0; i+1 < len(n.Content); i += 2 {
		if !fn(n.Content[i].Value, n.Content[i], n.Content[i+1]) {
			return
		}
	}
}

func (yamlReader) items(n *yaml.Node, fn func(item *yaml.Node) bool) {
	for _, it := range resolve(n).Content {
		if !fn(it) {
			return
		}
	}
}

func (yamlReader) count(n *yaml.Node) int {
	n = resolve(n)
	if n.Kind == yaml.MappingNode {
		return len(n.Content) / 2
	}
	return len(n.Content)
}

func (yamlReader) text(n *yaml.Node) string { return resolve(n).Value }

// identity gives YAML scalars the same canonical text as JSON ones, so 80,
// 0x50 and 80.0 are one number and "80" is a string.
func (r yamlReader) identity(n *yaml.Node) string {
	n = resolve(n)
	switch r.kind(n) {
	case String:
		return `"` + n.Value + `"`
	case Null:
		return "null"
	}
	var v any
	if err := n.Decode(&v); err != nil {
		return n.Value
	}
	switch v := v.(type) {
	case bool:
		return strconv.FormatBool(v)
	case int:
		if v > -1e15 && v < 1e15 {
			return strconv.Itoa(v)
		}
		return strconv.FormatFloat(float64(v), 'g', -1, 64)
	case uint64:
		return strconv.FormatFloat(float64(v), 'g', -1, 64)
	case float64:
		if v == math.Trunc(v) && math.Abs(v) < 1e15 {
			return strconv.FormatInt(int64(v), 10)
		}
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
	return n.Value
}

func (yamlReader) lookup(n *yaml.Node, key string) (*yaml.Node, bool) {
	n = resolve(n)
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1], true
		}
	}
	return nil, false
}

// yamlWriter builds a new tree; every node it writes is a copy, so the result
// shares nothing with the inputs.
type yamlWriter struct {
	root  *yaml.Node
	stack []*yaml.Node
}

func (w *yamlWriter) add(n *yaml.Node) {
	if len(w.stack) == 0 {
		w.root = n
		return
	}
	top := w.stack[len(w.stack)-1]
	top.Content = append(top.Content, n)
}

func (w *yamlWriter) copy(n *yaml.Node) { w.add(deepCopy(n)) }

// scalar keeps the live value's comments when the patch brings none, and its
// quoting when both are strings, so an edit changes only the value.
func (w *yamlWriter) scalar(n, like *yaml.Node, hasLike bool) {
	c := deepCopy(n)
	if hasLike && like.Kind == yaml.ScalarNode {
		if c.HeadComment == "" && c.LineComment == "" && c.FootComment == "" {
			c.HeadComment, c.LineComment, c.FootComment = like.HeadComment, like.LineComment, like.FootComment
		}
		if like.ShortTag() == "!!str" && c.ShortTag() == "!!str" && like.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) != 0 {
			c.Style = like.Style
		}
	}
	w.add(c)
}

func (w *yamlWriter) beginMap(like *yaml.Node) { w.open(yaml.MappingNode, "!!map", like) }
func (w *yamlWriter) beginList(like *yaml.Node) {
	w.open(yaml.SequenceNode, "!!seq", like)
}

func (w *yamlWriter) open(kind yaml.Kind, tag string, like *yaml.Node) {
	n := &yaml.Node{Kind: kind, Tag: tag}
	if like != nil {
		if r := resolve(like); r.Kind == kind {
			n.Style, n.HeadComment, n.LineComment, n.FootComment = r.Style, r.HeadComment, r.LineComment, r.FootComment
			if r.Tag != "" {
				n.Tag = r.Tag
			}
		}
	}
	w.add(n)
	w.stack = append(w.stack, n)
}

func (w *yamlWriter) key(k *yaml.Node) { w.add(deepCopy(k)) }
func (w *yamlWriter) endMap()          { w.stack = w.stack[:len(w.stack)-1] }
func (w *yamlWriter) endList()         { w.stack = w.stack[:len(w.stack)-1] }

func deepCopy(n *yaml.Node) *yaml.Node {
	if n == nil {
		return nil
	}
	c := *n
	if n.Kind != yaml.AliasNode && len(n.Content) > 0 {
		c.Content = make([]*yaml.Node, len(n.Content))
		for i, ch := range n.Content {
			c.Content[i] = deepCopy(ch)
		}
	}
	return &c
}

// checkYAMLSize rejects documents whose alias-expanded size exceeds
// MaxYAMLNodes or whose nesting exceeds MaxDepth.
func checkYAMLSize(n *yaml.Node, which string) error {
	memo := map[*yaml.Node]int{}
	size, ok := expandedSize(n, memo, 0)
	if !ok || size > MaxYAMLNodes {
		return &Error{Rule: ErrSyntax, Detail: which + ": more than " + strconv.Itoa(MaxYAMLNodes) +
			" nodes once aliases are expanded, or nesting deeper than " + strconv.Itoa(MaxDepth) + " levels"}
	}
	return nil
}

func expandedSize(n *yaml.Node, memo map[*yaml.Node]int, depth int) (int, bool) {
	if depth > MaxDepth {
		return 0, false
	}
	if n.Kind == yaml.AliasNode {
		if n.Alias == nil {
			return 1, true
		}
		return expandedSize(n.Alias, memo, depth+1)
	}
	if s, ok := memo[n]; ok {
		return s, true
	}
	memo[n] = MaxYAMLNodes + 1 // a cycle counts as too large
	size := 1
	for _, c := range n.Content {
		s, ok := expandedSize(c, memo, depth+1)
		if !ok {
			return 0, false
		}
		if size += s; size > MaxYAMLNodes {
			return size, true
		}
	}
	memo[n] = size
	return size, true
}

// ApplyYAML applies a strategic merge patch to a YAML document. Both may be
// document nodes or their content. The result is a new document node: the
// original's comments, key order and scalar styles are kept, members the patch
// adds follow in the patch's order, and the inputs are not modified.
func ApplyYAML(original, patch *yaml.Node, t schema.Type, opts Options) (*yaml.Node, error) {
	if err := checkYAMLSize(original, "document"); err != nil {
		return nil, err
	}
	if err := checkYAMLSize(patch, "patch"); err != nil {
		return nil, err
	}
	w := &yamlWriter{}
	e := newEngine[*yaml.Node](yamlReader{}, w, opts)
	e.rootType = t
	if err := e.applyRoot(resolve(original), resolve(patch)); err != nil {
		return nil, err
	}
	doc := &yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{w.root}}
	if original.Kind == yaml.DocumentNode {
		doc.HeadComment, doc.LineComment, doc.FootComment = original.HeadComment, original.LineComment, original.FootComment
	}
	return doc, nil
}

// YAMLIdentity returns the identity of a list element as the engine sees it:
// its merge-key values for a map (keys given), its value for a primitive.
// ok is false when a key field is missing or not a primitive.
func YAMLIdentity(item *yaml.Node, keys []string) (id string, ok bool) {
	return (&creator[*yaml.Node, yamlReader]{}).identity(resolve(item), keys)
}

// YAMLEqual reports whether two YAML values are the same value: maps with
// equal members in any order, lists with equal items in order, scalars equal
// as JSON values (80 and 0x50 are equal; 80 and "80" are not). Comments and
// styles do not count.
func YAMLEqual(a, b *yaml.Node) bool {
	return equal[*yaml.Node](yamlReader{}, resolve(a), resolve(b))
}
