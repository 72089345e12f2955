package strategicpatch_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stratadev/strata/strategicpatch"
)

// FuzzCreateTwoWay creates patches between arbitrary documents over the
// generator's schemas. The creator may not panic or change its inputs; an
// accepted pair gives valid JSON, and, for documents inside the properties'
// domain (fuzzDomain), a patch that turns original into modified in both
// modes.
func FuzzCreateTwoWay(f *testing.F) {
	g := newGen(2)
	var skipped int
	for range 64 {
		c := g.nextTriple(&skipped)
		f.Add(c.orig, c.mod, uint8(genSchemaIndex(c.schema.name)))
	}
	f.Fuzz(func(t *testing.T, orig, mod []byte, which uint8) {
		c, inDomain := fuzzTriple(orig, mod, orig, which)
		o, m := bytes.Clone(orig), bytes.Clone(mod)
		patch, err := strategicpatch.CreateTwoWay(orig, mod, c.st)
		if !bytes.Equal(o, orig) || !bytes.Equal(m, mod) {
			t.Fatal("CreateTwoWay changed its inputs")
		}
		if err != nil {
			return
		}
		if !json.Valid(patch) {
			t.Fatalf("accepted, but the patch is not JSON: %q", patch)
		}
		if !inDomain {
			return
		}
		for _, opts := range bothModes {
			if msg := roundTrip(c, patch, opts); msg != "" {
				t.Fatalf("mode %d: %s\n original: %s\n modified: %s\n    patch: %s", opts.Compat, msg, orig, mod, patch)
			}
		}
	})
}

// FuzzCreateThreeWay is FuzzCreateTwoWay for three documents: an accepted
// triple inside the domain gives a patch with the three-way property.
func FuzzCreateThreeWay(f *testing.F) {
	g := newGen(3)
	var skipped int
	for i := range 64 {
		c := g.nextTriple(&skipped)
		f.Add(c.orig, c.mod, c.cur, uint8(genSchemaIndex(c.schema.name)), i%4 == 0)
	}
	f.Fuzz(func(t *testing.T, orig, mod, cur []byte, which uint8, overwrite bool) {
		c, inDomain := fuzzTriple(orig, mod, cur, which)
		o, m, cu := bytes.Clone(orig), bytes.Clone(mod), bytes.Clone(cur)
		patch, err := strategicpatch.CreateThreeWay(orig, mod, cur, c.st, overwrite)
		if !bytes.Equal(o, orig) || !bytes.Equal(m, mod) || !bytes.Equal(cu, cur) {
			t.Fatal("CreateThreeWay changed its inputs")
		}
		if err != nil {
			return
		}
		if !json.Valid(patch) {
			t.Fatalf("accepted, but the patch is not JSON: %q", patch)
		}
		if !inDomain {
			return
		}
		for _, opts := range bothModes {
			if msgs := threeWayResult(c, patch, opts); len(msgs) > 0 {
				t.Fatalf("mode %d: %v\n original: %s\n modified: %s\n  current: %s\n    patch: %s", opts.Compat, msgs, orig, mod, cur, patch)
			}
		}
	})
}

// fuzzTriple decodes fuzz inputs; inDomain is false for documents outside
// the creation properties: not JSON objects, duplicate object keys or list
// values, null, numbers a float64 does not hold exactly, keys starting with
// "$" (a document holding a directive's name is read as the directive when
// its value is copied into a patch).
func fuzzTriple(orig, mod, cur []byte, which uint8) (genTriple, bool) {
	sc := genSchemas[int(which)%len(genSchemas)]
	c := genTriple{schema: sc, st: genSchemaTypes[int(which)%len(genSchemas)], orig: orig, mod: mod, cur: cur}
	inDomain := true
	for i, doc := range [3][]byte{orig, mod, cur} {
		var v any
		if json.Unmarshal(doc, &v) != nil || asMap(v) == nil || excluded(v, c.st) ||
			hasDuplicates(doc, false) || inexactNumber.Match(doc) || bytes.Contains(doc, []byte(`"$`)) {
			inDomain = false
		}
		*[3]*any{&c.origV, &c.modV, &c.cV}[i] = v
	}
	return c, inDomain
}
