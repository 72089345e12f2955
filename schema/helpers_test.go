package schema_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stratadev/strata/schema"
)

// fieldCase is one lookup: the field at path from the root type, and what it
// should say. A path is dotted field names; "[]" steps into list elements
// ("spec.containers[].env").
type fieldCase struct {
	path     string
	ok       bool
	strategy schema.Strategy
	keys     []string
	noType   bool // the field's Type is nil
}

// lookup follows path from root and returns the last field.
func lookup(t *testing.T, root schema.Type, path string) (schema.Field, bool) {
	t.Helper()
	var f schema.Field
	typ := root
	for seg := range strings.SplitSeq(path, ".") {
		elems := 0
		for strings.HasSuffix(seg, "[]") {
			seg, elems = strings.TrimSuffix(seg, "[]"), elems+1
		}
		if typ == nil {
			t.Fatalf("%s: no type before %q", path, seg)
		}
		var ok bool
		if f, ok = typ.Field(seg); !ok {
			return f, false
		}
		typ = f.Type
		for ; elems > 0; elems-- {
			if typ == nil {
				t.Fatalf("%s: no list type at %q", path, seg)
			}
			typ = typ.Elem()
			f = schema.Field{Type: typ}
		}
	}
	return f, true
}

func checkFields(t *testing.T, root schema.Type, cases []fieldCase) {
	t.Helper()
	for _, c := range cases {
		f, ok := lookup(t, root, c.path)
		if ok != c.ok {
			t.Errorf("%s: ok = %v, want %v", c.path, ok, c.ok)
			continue
		}
		if f.Strategy != c.strategy || !slices.Equal(f.MergeKeys, c.keys) {
			t.Errorf("%s: strategy %q keys %q, want %q %q", c.path, f.Strategy, f.MergeKeys, c.strategy, c.keys)
		}
		if ok && (f.Type == nil) != c.noType {
			t.Errorf("%s: type %v, want nil type %v", c.path, f.Type, c.noType)
		}
	}
}

func loadTestdata(t testing.TB, file string) *schema.Document {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := schema.Load(file, data)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	return doc
}

// checkErrors loads each document and compares the error with the golden
// text.
func checkErrors(t *testing.T, cases []errorCase) {
	t.Helper()
	for _, c := range cases {
		_, err := schema.Load("schema.yaml", []byte(c.doc))
		if err == nil {
			t.Errorf("%s: no error, want %q", c.name, c.want)
			continue
		}
		if err.Error() != c.want {
			t.Errorf("%s: error\n%s\nwant\n%s", c.name, err, c.want)
		}
	}
}

type errorCase struct {
	name string
	doc  string
	want string
}
