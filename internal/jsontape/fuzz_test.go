package jsontape_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stratadev/strata/internal/jsontape"
)

// FuzzJSONTape checks that Parse accepts exactly what encoding/json's Valid
// accepts, and that every node of an accepted document reads back: Str as
// encoding/json decodes the string, Identity without panicking.
func FuzzJSONTape(f *testing.F) {
	for _, s := range []string{
		`{}`, `[]`, `null`, `true`, `false`, `0`, `-0`, `1.5e3`, `"a\u00e9\n"`, ` {"a": [1, "x", {"b": null}]} `,
		`{"a":1,"a":2}`, `[1,]`, `{"a"}`, `"\ud800"`, `01`, `1.`, `-`, `"\x"`, "\"\xff\"", `[[[[]]]]`,
		`12345678901234567890`, `1e400`, `{"$patch":"delete"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		in := bytes.Clone(data)
		tape, err := jsontape.Parse(data)
		if !bytes.Equal(in, data) {
			t.Fatalf("Parse changed its input")
		}
		valid := json.Valid(data)
		if (err == nil) != valid {
			t.Fatalf("Parse error %v, but json.Valid is %v for %q", err, valid, data)
		}
		if err != nil {
			return
		}
		walk(t, tape, 0)
	})
}

func walk(t *testing.T, tape *jsontape.Tape, n jsontape.Node) {
	switch tape.Kind(n) {
	case jsontape.Object:
		count := 0
		tape.Members(n, func(k, v jsontape.Node) bool {
			count++
			checkStr(t, tape, k)
			walk(t, tape, v)
			return true
		})
		if count != tape.Len(n) {
			t.Fatalf("object of %d members says Len %d", count, tape.Len(n))
		}
	case jsontape.Array:
		count := 0
		tape.Items(n, func(it jsontape.Node) bool {
			count++
			walk(t, tape, it)
			return true
		})
		if count != tape.Len(n) {
			t.Fatalf("array of %d items says Len %d", count, tape.Len(n))
		}
	case jsontape.String:
		checkStr(t, tape, n)
		_ = tape.Identity(n)
	default:
		id := tape.Identity(n)
		if id == "" {
			t.Fatalf("empty identity for %q", tape.Raw(n))
		}
	}
	if !json.Valid(tape.Raw(n)) {
		t.Fatalf("Raw of a node is not JSON: %q", tape.Raw(n))
	}
}

func checkStr(t *testing.T, tape *jsontape.Tape, n jsontape.Node) {
	var want string
	raw := tape.Raw(n)
	if err := json.Unmarshal(raw, &want); err != nil {
		t.Fatalf("Raw of a string does not decode: %q: %v", raw, err)
	}
	got := tape.Str(n)
	// encoding/json replaces each invalid UTF-8 byte by U+FFFD, where Str
	// keeps the bytes.
	if got != want && replaceInvalid(got) != want {
		t.Fatalf("Str(%q) = %q, encoding/json decodes %q", raw, got, want)
	}
}

func replaceInvalid(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			b.WriteString("\uFFFD")
		} else {
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}
