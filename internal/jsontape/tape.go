// Package jsontape parses JSON into a flat, read-only tape of tokens with skip
// pointers, so that a caller can walk a document, skip any subtree in constant
// time, and copy untouched subtrees to its output as the original bytes.
//
// The strategic merge patch engine reads documents this way instead of decoding
// them into map[string]any: applying a small patch then costs one validating pass
// over the document plus the work on the parts the patch touches.
package jsontape

import (
	"encoding/json"
	"fmt"
	"strconv"
	"unsafe"
)

// Kind is the kind of a JSON value.
type Kind uint8

// The kinds of JSON values.
const (
	Null Kind = iota
	False
	True
	Number
	String
	Object
	Array
)

// MaxDepth is the deepest nesting of objects and arrays a document may have.
const MaxDepth = 10000

// token is one value or object key on the tape. Containers are followed by
// their members (objects: key token, then the value's tokens) and record in
// next the index of the first token after them.
type token struct {
	kind    Kind
	escaped bool  // strings: the text contains backslash escapes
	start   int32 // offset of the first byte
	end     int32 // offset just past the last byte
	next    int32 // index of the token after this value and its members
	count   int32 // containers: number of members or items
}

// Tape is a parsed JSON document. Node handles are indexes into it.
type Tape struct {
	src  []byte
	toks []token
}

// Node is a handle to a value (or object key) on a tape.
type Node = int32

// SyntaxError reports malformed JSON with the byte offset where it was found.
type SyntaxError struct {
	Offset int
	Msg    string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("invalid JSON at byte %d: %s", e.Offset, e.Msg)
}

// Parse validates src as exactly one JSON value (surrounded by optional
// whitespace) and returns its tape. The tape refers to src, which must not
// change while the tape is in use. The root value is node 0.
func Parse(src []byte) (*Tape, error) {
	if len(src) > 1<<31-1 {
		return nil, &SyntaxError{0, "document larger than 2 GiB"}
	}
	p := parser{src: src, toks: make([]token, 0, len(src)/8+4)}
	p.skipSpace()
	if p.pos >= len(src) {
		return nil, &SyntaxError{p.pos, "empty document"}
	}
	if err := p.value(0); err != nil {
		return nil, err
	}
	p.skipSpace()
	if p.pos < len(src) {
		return nil, &SyntaxError{p.pos, fmt.Sprintf("unexpected %q after the document", src[p.pos])}
	}
	return &Tape{src: src, toks: p.toks}, nil
}

// Kind returns the kind of n.
func (t *Tape) Kind(n Node) Kind { return t.toks[n].kind }

// Raw returns the bytes of n as they appear in the source, including quotes
// for strings and all members for containers.
func (t *Tape) Raw(n Node) []byte {
	tk := &t.toks[n]
	return t.src[tk.start:tk.end]
}

// Next returns the node after n and all of n's members.
func (t *Tape) Next(n Node) Node { return t.toks[n].next }

// Len returns the number of members of an object or items of an array.
func (t *Tape) Len(n Node) int { return int(t.toks[n].count) }

// Str returns the value of a string node (or object key), unescaped. When
// the string has no escapes the result shares memory with the source.
func (t *Tape) Str(n Node) string {
	tk := &t.toks[n]
	raw := t.src[tk.start+1 : tk.end-1]
	if !tk.escaped {
		return unsafe.String(unsafe.SliceData(raw), len(raw))
	}
	var s string
	// The parser validated the escapes; encoding/json decodes them exactly.
	if err := json.Unmarshal(t.src[tk.start:tk.end], &s); err != nil {
		return string(raw)
	}
	return s
}

// Identity returns a canonical text for a scalar node, equal for equal JSON
// values: strings as `"` + value + `"`, numbers in shortest float64 form
// (integers of up to 15 digits as written), and true, false, null.
func (t *Tape) Identity(n Node) string {
	tk := &t.toks[n]
	switch tk.kind {
	case String:
		if !tk.escaped {
			raw := t.src[tk.start:tk.end]
			return unsafe.String(unsafe.SliceData(raw), len(raw))
		}
		return `"` + t.Str(n) + `"`
	case Number:
		return CanonicalNumber(t.src[tk.start:tk.end])
	case True:
		return "true"
	case False:
		return "false"
	case Null:
		return "null"
	}
	return ""
}

// CanonicalNumber returns the canonical text of a valid JSON number: the
// shortest float64 formatting, or the text itself for integers exact in a
// float64.
func CanonicalNumber(raw []byte) string {
	plain := len(raw) <= 15
	for _, c := range raw {
		if c == '.' || c == 'e' || c == 'E' {
			plain = false
			break
		}
	}
	s := unsafe.String(unsafe.SliceData(raw), len(raw))
	if plain && s != "-0" {
		return s
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil { // out of float64 range: keep the text
		return string(raw)
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// Members calls fn for each member of object n in document order, with the
// key node and the value node, until fn returns false.
func (t *Tape) Members(n Node, fn func(key, val Node) bool) {
	end := t.toks[n].next
	for k := n + 1; k < end; {
		v := k + 1
		if !fn(k, v) {
			return
		}
		k = t.toks[v].next
	}
}

// Items calls fn for each item of array n in order until fn returns false.
func (t *Tape) Items(n Node, fn func(item Node) bool) {
	end := t.toks[n].next
	for i := n + 1; i < end; i = t.toks[i].next {
		if !fn(i) {
			return
		}
	}
}

// Lookup returns the value of the first member of object n named key.
func (t *Tape) Lookup(n Node, key string) (Node, bool) {
	end := t.toks[n].next
	for k := n + 1; k < end; {
		v := k + 1
		if t.keyEquals(k, key) {
			return v, true
		}
		k = t.toks[v].next
	}
	return 0, false
}

func (t *Tape) keyEquals(k Node, key string) bool {
	tk := &t.toks[k]
	if !tk.escaped {
		return int(tk.end-tk.start-2) == len(key) && string(t.src[tk.start+1:tk.end-1]) == key
	}
	return t.Str(k) == key
}
