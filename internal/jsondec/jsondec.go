// Package jsondec decodes a JSON object into the generic values of an
// unstructured object (map[string]any, []any, string, int64, float64,
// bool, nil) exactly as apimachinery's json.Unmarshal does, without
// reflection and in one pass. Every stored object the watch cache follows
// is decoded so; apimachinery's decoder checks the whole input, then walks
// it again by reflection.
//
// It is jsonenc's counterpart, with one difference of contract: what it
// does not take on (input that is not one JSON object, invalid JSON,
// numbers out of float64's range, nesting deeper than maxDepth) it reports
// by ok false, and the caller decodes with apimachinery, whose value or
// error is then the answer. So a difference can only be in what both
// accept; FuzzObject holds the two to the same value there.
//
// It is not built on internal/jsontape: a tape is a validating pass of its
// own, which a decoder building the maps as it reads does not need.
package jsondec

import (
	"encoding/binary"
	"encoding/json"
	"strconv"
)

// maxDepth bounds nesting; deeper input is left to apimachinery's decoder
// (its own limit is 10,000).
const maxDepth = 1000

// Object decodes data, one JSON object with optional surrounding white
// space. ok is false when data is anything else or needs apimachinery's
// decoder (see the package comment).
func Object(data []byte) (map[string]any, bool) { return ObjectReusing(data, nil) }

// ObjectReusing is Object, with the values of r's member taken from r
// when r has one decoded from the same bytes, and added to r otherwise
// (nil: none is reused). r's member is reused only where it is an object
// or an array.
func ObjectReusing(data []byte, r *Reuse) (m map[string]any, ok bool) {
	d := decoder{data: data, reuse: r}
	d.skipSpace()
	if !d.at('{') {
		return nil, false
	}
	if m, ok = d.object(0); !ok {
		return nil, false
	}
	d.skipSpace()
	return m, d.pos == len(d.data)
}

type decoder struct {
	data []byte
	pos  int
	// reuse, when set, supplies one member's values (ObjectReusing);
	// inOuter: the member holding it is being decoded.
	reuse   *Reuse
	inOuter bool
}

func (d *decoder) at(c byte) bool { return d.pos < len(d.data) && d.data[d.pos] == c }

func (d *decoder) skipSpace() {
	for d.pos < len(d.data) {
		switch d.data[d.pos] {
		case ' ', '\t', '\n', '\r':
			d.pos++
		default:
			return
		}
	}
}

// value decodes the value at pos (white space already skipped).
func (d *decoder) value(depth int) (any, bool) {
	if d.pos >= len(d.data) {
		return nil, false
	}
	switch c := d.data[d.pos]; {
	case c == '{':
		m, ok := d.object(depth)
		return m, ok
	case c == '[':
		return d.array(depth)
	case c == '"':
		s, ok := d.str(nil)
		return s, ok
	case c == 't':
		return true, d.literal("true")
	case c == 'f':
		return false, d.literal("false")
	case c == 'n':
		return nil, d.literal("null")
	case c == '-' || '0' <= c && c <= '9':
		return d.number()
	}
	return nil, false
}

func (d *decoder) literal(word string) bool {
	if len(d.data)-d.pos < len(word) || string(d.data[d.pos:d.pos+len(word)]) != word {
		return false
	}
	d.pos += len(word)
	return true
}

// object decodes the object at pos, its '{' not yet consumed. Like
// encoding/json, a repeated key keeps its last value, and the map is
// made without a size hint.
func (d *decoder) object(depth int) (map[string]any, bool) {
	if depth >= maxDepth {
		return nil, false
	}
	d.pos++ // '{'
	m := make(map[string]any)
	d.skipSpace()
	if d.at('}') {
		d.pos++
		return m, true
	}
	for {
		if !d.at('"') {
			return nil, false
		}
		key, ok := d.str(keys)
		if !ok {
			return nil, false
		}
		d.skipSpace()
		if !d.at(':') {
			return nil, false
		}
		d.pos++
		d.skipSpace()
		v, ok := d.member(key, depth)
		if !ok {
			return nil, false
		}
		m[key] = v
		if more, ok := d.next('}'); !more {
			return m, ok
		}
	}
}

// array decodes the array at pos, its '[' not yet consumed.
func (d *decoder) array(depth int) ([]any, bool) {
	if depth >= maxDepth {
		return nil, false
	}
	d.pos++ // '['
	a := []any{}
	d.skipSpace()
	if d.at(']') {
		d.pos++
		return a, true
	}
	for {
		v, ok := d.value(depth + 1)
		if !ok {
			return nil, false
		}
		a = append(a, v)
		if more, ok := d.next(']'); !more {
			return a, ok
		}
	}
}

// next consumes what follows a member of an object or array: a ',' and
// the white space after it (more), or the closing byte (ok, not more).
// Anything else is invalid (neither).
func (d *decoder) next(closing byte) (more, ok bool) {
	d.skipSpace()
	switch {
	case d.at(','):
		d.pos++
		d.skipSpace()
		return true, true
	case d.at(closing):
		d.pos++
		return false, true
	}
	return false, false
}

// str decodes the string at pos, its '"' not yet consumed. A string of
// printable ASCII without escapes is its bytes (or, when intern has it,
// intern's copy: map keys repeat in every object); any other is decoded
// by encoding/json, whose unquoting (escapes, surrogate pairs, invalid
// UTF-8 made U+FFFD) apimachinery's decoder shares.
func (d *decoder) str(intern map[string]string) (string, bool) {
	start := d.pos
	i := start + 1
	for i+8 <= len(d.data) && plain(binary.LittleEndian.Uint64(d.data[i:])) {
		i += 8
	}
	for ; i < len(d.data); i++ {
		c := d.data[i]
		if c == '"' {
			raw := d.data[start+1 : i]
			d.pos = i + 1
			if s, ok := intern[string(raw)]; ok {
				return s, true
			}
			return string(raw), true
		}
		if c < 0x20 || c == '\\' || c >= 0x80 {
			return d.strSlow(start)
		}
	}
	return "", false
}

// Word-at-a-time masks: lsb holds 1 in every byte, msb 0x80.
const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// plain reports whether none of the eight bytes of x ends or escapes a
// string or needs checking as UTF-8: a quote, a backslash, a control
// character or a byte of 0x80 and above. A string's bytes are mostly
// plain; testing them eight at a time made the watch cache's first load
// of ConfigMaps of 1 KiB spend a third less in str. For a byte below 0x80,
// b-1 sets its top bit only when b is 0 (the byte equal to the quote or
// backslash, once xored), and b-0x20 only when b is a control character;
// a borrow can set the top bit of a byte above one that did, never of a
// word that has none. Bytes of 0x80 and above set it themselves.
func plain(x uint64) bool {
	quote, backslash := x^(lsb*'"'), x^(lsb*'\\')
	return ((quote-lsb)|(backslash-lsb)|(x-lsb*0x20)|x)&msb == 0
}

// strSlow finds the end of the string at start, escapes skipped, and
// decodes it with encoding/json.
func (d *decoder) strSlow(start int) (string, bool) {
	end := d.stringEnd(start)
	if end == len(d.data) {
		return "", false
	}
	var s string
	if json.Unmarshal(d.data[start:end+1], &s) != nil {
		return "", false
	}
	d.pos = end + 1
	return s, true
}

// stringEnd returns the position of the quote that closes the string whose
// opening quote is at i (len(data) if none does).
func (d *decoder) stringEnd(i int) int {
	for i++; i < len(d.data); i++ {
		for i+8 <= len(d.data) && plain(binary.LittleEndian.Uint64(d.data[i:])) {
			i += 8
		}
		if i >= len(d.data) {
			break
		}
		switch d.data[i] {
		case '\\':
			i++
		case '"':
			return i
		}
	}
	return len(d.data)
}

// number decodes the number at pos: int64 when it has no '.' and
// ParseInt takes it (which it does not with an exponent), as
// apimachinery's decoder does, else float64.
func (d *decoder) number() (any, bool) {
	start := d.pos
	if d.at('-') {
		d.pos++
	}
	switch {
	case d.at('0'):
		d.pos++
	case d.digits() == 0:
		return nil, false
	}
	fraction := false
	if d.at('.') {
		d.pos++
		if d.digits() == 0 {
			return nil, false
		}
		fraction = true
	}
	if d.at('e') || d.at('E') {
		d.pos++
		if d.at('+') || d.at('-') {
			d.pos++
		}
		if d.digits() == 0 {
			return nil, false
		}
	}
	// The conversions do not escape: no copy of the literal is made.
	if !fraction {
		if i, err := strconv.ParseInt(string(d.data[start:d.pos]), 10, 64); err == nil {
			return i, true
		}
	}
	f, err := strconv.ParseFloat(string(d.data[start:d.pos]), 64)
	return f, err == nil
}

// digits consumes decimal digits and returns how many.
func (d *decoder) digits() int {
	n := 0
	for d.pos < len(d.data) && '0' <= d.data[d.pos] && d.data[d.pos] <= '9' {
		d.pos++
		n++
	}
	return n
}

// keys are the map keys of Kubernetes objects common enough to share one
// copy of among all decoded objects.
var keys = func() map[string]string {
	m := map[string]string{}
	for _, k := range []string{
		"apiVersion", "kind", "metadata", "spec", "status", "data", "binaryData", "stringData", "type",
		"name", "namespace", "uid", "resourceVersion", "generation", "creationTimestamp",
		"deletionTimestamp", "deletionGracePeriodSeconds", "labels", "annotations", "ownerReferences",
		"finalizers", "managedFields", "manager", "operation", "time", "fieldsType", "fieldsV1",
		"subresource", "controller", "blockOwnerDeletion", "f:metadata", "f:labels", "f:annotations",
		"f:spec", "f:status", "f:data", "f:ownerReferences", "f:finalizers", ".", "conditions",
		"lastTransitionTime", "message", "reason", "observedGeneration", "selector", "template",
		"containers", "image", "ports", "replicas",
	} {
		m[k] = k
	}
	return m
}()
