// Package jsonenc encodes the generic JSON values of unstructured objects
// (map[string]any, []any, strings, numbers, booleans, nil) exactly as
// encoding/json does — sorted keys, HTML-safe escaping, the same number
// formats — without reflection. The API server spends most of a large
// list's time encoding such maps; this is several times faster. Values of
// other types are handed to encoding/json.
package jsonenc

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"
)

// Marshal returns the JSON encoding of v, byte for byte what json.Marshal
// returns.
func Marshal(v any) ([]byte, error) {
	return Append(make([]byte, 0, 512), v)
}

// Append appends the JSON encoding of v to dst.
func Append(dst []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return append(dst, "null"...), nil
	case string:
		return appendString(dst, x), nil
	case bool:
		return strconv.AppendBool(dst, x), nil
	case int64:
		return strconv.AppendInt(dst, x, 10), nil
	case int:
		return strconv.AppendInt(dst, int64(x), 10), nil
	case int32:
		return strconv.AppendInt(dst, int64(x), 10), nil
	case float64:
		return appendFloat(dst, x)
	case map[string]any:
		return appendMap(dst, x)
	case []any:
		return appendSlice(dst, x)
	}
	data, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return append(dst, data...), nil
}

// smallMapKeys is the most keys of a map whose keys appendMap sorts
// without allocating.
const smallMapKeys = 16

func appendMap(dst []byte, m map[string]any) ([]byte, error) {
	if m == nil {
		return append(dst, "null"...), nil
	}
	// Most maps of an object are small: their keys are sorted on the
	// stack. Otherwise the maps' key slices are most of the allocations
	// of encoding a typical object (a ConfigMap: jsondec's testdata).
	var small [smallMapKeys]string
	keys := small[:0]
	if len(m) > smallMapKeys {
		keys = make([]string, 0, len(m))
	}
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	dst = append(dst, '{')
	for i, k := range keys {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendString(dst, k)
		dst = append(dst, ':')
		var err error
		if dst, err = Append(dst, m[k]); err != nil {
			return nil, err
		}
	}
	return append(dst, '}'), nil
}

func appendSlice(dst []byte, s []any) ([]byte, error) {
	if s == nil {
		return append(dst, "null"...), nil
	}
	dst = append(dst, '[')
	for i, v := range s {
		if i > 0 {
			dst = append(dst, ',')
		}
		var err error
		if dst, err = Append(dst, v); err != nil {
			return nil, err
		}
	}
	return append(dst, ']'), nil
}

// appendFloat formats as encoding/json: like ES6, 'f' unless the exponent
// is very small or large, then 'e' with a one-digit negative exponent.
func appendFloat(dst []byte, f float64) ([]byte, error) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return nil, fmt.Errorf("json: unsupported value: %s", strconv.FormatFloat(f, 'g', -1, 64))
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	dst = strconv.AppendFloat(dst, f, format, -1, 64)
	if format == 'e' {
		// e-09 becomes e-9
		if n := len(dst); n >= 4 && dst[n-4] == 'e' && dst[n-3] == '-' && dst[n-2] == '0' {
			dst[n-2] = dst[n-1]
			dst = dst[:n-1]
		}
	}
	return dst, nil
}

const hex = "0123456789abcdef"

// appendString quotes s as encoding/json does with HTML escaping: <, > and
// & as \u003c \u003e \u0026, U+2028 and U+2029 escaped, invalid UTF-8 as
// U+FFFD.
func appendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' && b != '<' && b != '>' && b != '&' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[b>>4], hex[b&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
