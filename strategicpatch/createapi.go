package strategicpatch

import (
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/stratadev/strata/internal/jsontape"
	"github.com/stratadev/strata/schema"
)

// ConflictError reports the paths where a three-way patch would overwrite
// changes another writer made to the current document.
type ConflictError struct {
	Paths []string
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("the patch conflicts with changes made to the current document at %d path(s): %s",
		len(e.Paths), strings.Join(e.Paths, ", "))
}

// CreateTwoWay returns the smallest strategic merge patch that turns original
// into modified, as compact JSON: changed and added fields, null for removed
// fields, `$patch: delete` for removed elements of merge lists of maps,
// $deleteFromPrimitiveList for removed primitives, $setElementOrder for merge
// lists whose items or order changed, $retainKeys for retainKeys fields, and
// other lists whole. Applying it to original, in either compatibility mode,
// gives modified. No difference gives {}.
func CreateTwoWay(original, modified []byte, t schema.Type) ([]byte, error) {
	return CreateThreeWay(original, modified, original, t, true)
}

// CreateThreeWay returns the patch `kubectl apply` sends: it deletes what
// original (the last applied configuration) had and modified no longer has,
// adds and changes what modified has and current lacks or holds otherwise,
// and leaves alone what only current has. With overwrite false, a change
// that would overwrite another writer's change to current is an error, a
// *ConflictError listing every such path.
func CreateThreeWay(original, modified, current []byte, t schema.Type, overwrite bool) ([]byte, error) {
	var tapes [3]*jsontape.Tape
	for i, doc := range [3][]byte{original, modified, current} {
		if i == 2 && sameBytes(current, original) {
			tapes[2] = tapes[0] // the two-way patch: parse original once
			break
		}
		if len(doc) == 0 {
			doc = []byte("{}")
		}
		tp, err := jsontape.Parse(doc)
		if err != nil {
			return nil, &Error{Rule: ErrSyntax, Detail: fmt.Sprintf("%s document: %v", [3]string{"original", "modified", "current"}[i], err)}
		}
		tapes[i] = tp
	}
	c := &creator[jnode, jsonReader]{track: !overwrite, twoWay: tapes[2] == tapes[0]}
	p, err := c.createRoot(jnode{tapes[0], 0}, jnode{tapes[1], 0}, jnode{tapes[2], 0}, t)
	if err != nil {
		return nil, err
	}
	if !overwrite && len(c.conflicts) > 0 {
		return nil, &ConflictError{Paths: c.conflicts}
	}
	w := &jsonWriter{}
	render[jnode](p, w, jnode{})
	return w.buf, nil
}

// sameBytes reports whether a and b are the same slice of memory.
func sameBytes(a, b []byte) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// CreateTwoWayYAML is CreateTwoWay on yaml.Node trees; the patch keeps the
// modified document's key nodes, with their comments.
func CreateTwoWayYAML(original, modified *yaml.Node, t schema.Type) (*yaml.Node, error) {
	return CreateThreeWayYAML(original, modified, original, t, true)
}

// CreateThreeWayYAML is CreateThreeWay on yaml.Node trees.
func CreateThreeWayYAML(original, modified, current *yaml.Node, t schema.Type, overwrite bool) (*yaml.Node, error) {
	for i, n := range []*yaml.Node{original, modified, current} {
		if err := checkYAMLSize(n, [3]string{"original", "modified", "current"}[i]); err != nil {
			return nil, err
		}
	}
	c := &creator[*yaml.Node, yamlReader]{track: !overwrite, twoWay: original == current}
	p, err := c.createRoot(resolve(original), resolve(modified), resolve(current), t)
	if err != nil {
		return nil, err
	}
	if !overwrite && len(c.conflicts) > 0 {
		return nil, &ConflictError{Paths: c.conflicts}
	}
	w := &yamlWriter{}
	render[*yaml.Node](p, w, nil)
	return &yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{w.root}}, nil
}

func (w *jsonWriter) keyText(key string) {
	w.sep()
	w.buf = appendJSONString(w.buf, key)
	w.buf = append(w.buf, ':')
	w.afterKey = true
}

func (w *jsonWriter) stringValue(s string) {
	w.sep()
	w.buf = appendJSONString(w.buf, s)
}

func (w *jsonWriter) null() {
	w.sep()
	w.buf = append(w.buf, "null"...)
}

// appendJSONString writes s as a JSON string, escaping only what JSON
// requires and keeping every other byte: a key that is not valid UTF-8 must
// come out as the input wrote it, or a directive naming it ($retainKeys,
// $setElementOrder/<key>) would name another key.
func appendJSONString(buf []byte, s string) []byte {
	const hex = "0123456789abcdef"
	buf = append(buf, '"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\':
			buf = append(buf, '\\', c)
		case c < 0x20:
			buf = append(buf, '\\', 'u', '0', '0', hex[c>>4], hex[c&15])
		default:
			buf = append(buf, c)
		}
	}
	return append(buf, '"')
}

func (w *yamlWriter) keyText(key string) { w.stringValue(key) }

func (w *yamlWriter) stringValue(s string) {
	w.add(&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s})
}

func (w *yamlWriter) null() {
	w.add(&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: "null"})
}
