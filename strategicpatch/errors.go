package strategicpatch

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Sentinel rules a caller can test with errors.Is on an *Error.
var (
	// ErrInvalidDirective: a $patch, $setElementOrder, $deleteFromPrimitiveList
	// or $retainKeys directive is malformed or unknown.
	ErrInvalidDirective = errors.New("invalid directive")
	// ErrMissingMergeKey: a list element lacks a field of its merge key.
	ErrMissingMergeKey = errors.New("missing merge key")
	// ErrDuplicateMergeKey: a patch list names one element twice.
	ErrDuplicateMergeKey = errors.New("duplicate merge key")
	// ErrOrder: a patch list disagrees with its $setElementOrder.
	ErrOrder = errors.New("patch list does not agree with $setElementOrder")
	// ErrType: a value has a kind the schema or the document does not allow.
	ErrType = errors.New("wrong type")
	// ErrSchema: the schema has no such field (Kubernetes compatibility mode).
	ErrSchema = errors.New("not in schema")
	// ErrSyntax: a document is not well-formed.
	ErrSyntax = errors.New("malformed document")
)

// Error is a rejected patch: where in the document, which rule, and detail.
type Error struct {
	Path   string // "spec.template.spec.containers[name=web].env"; empty at the root
	Rule   error  // one of the sentinel rules above
	Detail string // what was found, with the offending value
}

func (e *Error) Error() string {
	where := e.Path
	if where == "" {
		where = "(root)"
	}
	if e.Detail == "" {
		return where + ": " + e.Rule.Error()
	}
	return where + ": " + e.Rule.Error() + ": " + e.Detail
}

// Unwrap lets errors.Is match the rule.
func (e *Error) Unwrap() error { return e.Rule }

// path is the location the engine is at, built into text only for errors.
type path struct {
	elems []pathElem
}

type pathElem struct {
	field string // a map key, or a list element's key text ("name=web")
	index int    // a list index when field is empty and keyed is false
	keyed bool   // field is a list element's key text
}

func (p *path) pushField(name string) { p.elems = append(p.elems, pathElem{field: name}) }
func (p *path) pushIndex(i int)       { p.elems = append(p.elems, pathElem{index: i}) }
func (p *path) pushKeyed(text string) { p.elems = append(p.elems, pathElem{field: text, keyed: true}) }
func (p *path) pop()                  { p.elems = p.elems[:len(p.elems)-1] }
func (p *path) errorf(rule error, format string, args ...any) *Error {
	return &Error{Path: p.String(), Rule: rule, Detail: fmt.Sprintf(format, args...)}
}

func (p *path) String() string {
	var b strings.Builder
	for _, e := range p.elems {
		switch {
		case e.keyed:
			b.WriteString("[" + e.field + "]")
		case e.field == "":
			b.WriteString("[" + strconv.Itoa(e.index) + "]")
		default:
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(e.field)
		}
	}
	return b.String()
}
