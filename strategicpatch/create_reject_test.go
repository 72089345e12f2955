package strategicpatch_test

import (
	"errors"
	"testing"

	"github.com/stratadev/strata/schema"
	"github.com/stratadev/strata/strategicpatch"
)

// TestCreateRejects checks the creator's bad-input rules, with the path:
// also inside values the patch would carry whole (a new field or item),
// which the apply engine would otherwise reject in the patch.
func TestCreateRejects(t *testing.T) {
	cases := []struct {
		name, orig, mod string
		rule            error
		path            string
	}{
		{"a merge list becoming a string, which its schema forbids", `{"items":[{"name":"a"}]}`, `{"items":"x"}`, strategicpatch.ErrType, "items"},
		{"a merge list becoming a map", `{"nested":{"a":"x"},"items":[{"name":"a"}]}`, `{"items":{"name":"a"}}`, strategicpatch.ErrType, "items"},
		{"an item lacking its merge key", `{"items":[{"name":"a"}]}`, `{"items":[{"name":"a"},{"value":"x"}]}`, strategicpatch.ErrMissingMergeKey, "items"},
		{"duplicate merge keys in modified", `{"items":[]}`, `{"items":[{"name":"a"},{"name":"a"}]}`, strategicpatch.ErrDuplicateMergeKey, "items"},
		{"an item lacking its key inside a new item", `{}`, `{"items":[{"name":"a","subs":[{"value":"x"}]}]}`, strategicpatch.ErrMissingMergeKey, "items[0].subs"},
		{"duplicate keys inside a new field", `{}`, `{"items":[{"name":"a"},{"name":"a"}]}`, strategicpatch.ErrDuplicateMergeKey, "items"},
		{"duplicate keys inside a new item", `{"items":[]}`, `{"items":[{"name":"a","subs":[{"id":"x"},{"id":"x"}]}]}`, strategicpatch.ErrDuplicateMergeKey, "items[0].subs"},
		{"a key twice in a new map", `{}`, `{"nested":{"a":"x","a":"y"}}`, strategicpatch.ErrSyntax, "nested"},
		{"unparseable modified", `{}`, `{"a":`, strategicpatch.ErrSyntax, ""},
		{"a document that is not a map", `{}`, `[1]`, strategicpatch.ErrType, ""},
	}
	st := schema.ForValue(genDoc{})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, err := strategicpatch.CreateTwoWay([]byte(c.orig), []byte(c.mod), st)
			var e *strategicpatch.Error
			if !errors.As(err, &e) || !errors.Is(err, c.rule) {
				t.Fatalf("got %s, %v; want rule %v", out, err, c.rule)
			}
			if e.Path != c.path {
				t.Errorf("path %q, want %q (%v)", e.Path, c.path, err)
			}
		})
	}
}
