package strategicpatch_test

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/stratadev/strata/schema"
	"github.com/stratadev/strata/strategicpatch"
)

// FuzzApplyJSON applies arbitrary patches to arbitrary documents over the
// generator's schemas, in both modes. Neither mode may panic or change its
// inputs, an accepted patch gives valid JSON, and Kubernetes mode gives
// apimachinery's answer wherever apimachinery accepts without panicking,
// except for the intended differences (see differential_test.go).
func FuzzApplyJSON(f *testing.F) {
	g := newGen(1)
	for i := range 64 {
		c := g.next()
		f.Add(c.orig, c.patch, uint8(genSchemaIndex(c.schema.name)), i%2 == 0)
	}
	for _, c := range fuzzSeedExamples(f) {
		f.Add(c[0], c[1], uint8(0), true)
	}
	f.Fuzz(func(t *testing.T, orig, patch []byte, which uint8, compat bool) {
		sc := genSchemas[int(which)%len(genSchemas)]
		st := schema.ForValue(sc.goType)
		o, p := bytes.Clone(orig), bytes.Clone(patch)
		opts := strategicpatch.Options{}
		if compat {
			opts.Compat = strategicpatch.Kubernetes
		}
		out, err := strategicpatch.ApplyJSON(orig, patch, st, opts)
		if !bytes.Equal(o, orig) || !bytes.Equal(p, patch) {
			t.Fatal("ApplyJSON changed its inputs")
		}
		if err == nil && !json.Valid(out) {
			t.Fatalf("accepted, but the result is not JSON: %q", out)
		}
		if !compat || intendedDifference(orig, patch) {
			return
		}
		ref := runReference(orig, patch, sc.goType)
		if ref.panic || ref.err != nil {
			return
		}
		if err != nil {
			t.Fatalf("apimachinery accepts (%v), kubernetes mode rejects: %v\n original: %s\n    patch: %s", ref, err, orig, patch)
		}
		var got any
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, ref.result) {
			t.Fatalf("kubernetes mode differs\n original: %s\n    patch: %s\n apimachinery: %v\n       strata: %s", orig, patch, ref, out)
		}
	})
}

func genSchemaIndex(name string) int {
	for i, s := range genSchemas {
		if s.name == name {
			return i
		}
	}
	return 0
}

// fuzzSeedExamples turns the worked examples into fuzz seeds.
func fuzzSeedExamples(f *testing.F) [][2][]byte {
	var out [][2][]byte
	files, _ := filepath.Glob("testdata/seeds/*.yaml")
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		var cases []applyCase
		if err := yaml.Unmarshal(data, &cases); err != nil {
			f.Fatal(err)
		}
		for _, c := range cases {
			o, err1 := sigsyaml.YAMLToJSON([]byte(c.Original))
			p, err2 := sigsyaml.YAMLToJSON([]byte(c.Patch))
			if err1 == nil && err2 == nil {
				out = append(out, [2][]byte{o, p})
			}
		}
	}
	return out
}

var inexactNumber = regexp.MustCompile(`[0-9][.eE]|[0-9]{16}|-0[^.0-9eE]`)

// intendedDifference reports inputs in one of the intended difference
// classes, or in what apimachinery reads differently from a JSON parser:
// duplicate object keys, numbers a float64 does not hold exactly.
func intendedDifference(orig, patch []byte) bool {
	if inexactNumber.Match(orig) || inexactNumber.Match(patch) {
		return true
	}
	if bytes.Contains(patch, []byte("$deleteFromPrimitiveList")) || bytes.Contains(patch, []byte("$setElementOrder")) {
		return true // aimed at the wrong lists, or adding what it deletes
	}
	if hasDuplicates(orig, false) || hasDuplicates(patch, true) {
		return true
	}
	return false
}

// hasDuplicates reports duplicate object keys, duplicate scalars in a list,
// and, in patches, lists of maps whose items share a likely merge key.
func hasDuplicates(data []byte, patch bool) bool {
	if !json.Valid(data) {
		return false
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	found := false
	var walk func() any
	walk = func() any {
		tok, err := dec.Token()
		if err != nil {
			found = found || err != io.EOF
			return nil
		}
		switch tok {
		case json.Delim('{'):
			m := map[string]any{}
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					found = true
					return nil
				}
				key, _ := k.(string)
				if _, dup := m[key]; dup {
					found = true
				}
				m[key] = walk()
			}
			dec.Token()
			return m
		case json.Delim('['):
			seen := map[string]bool{}
			for dec.More() {
				v := walk()
				var id string
				switch v := v.(type) {
				case map[string]any:
					if !patch {
						continue
					}
					for _, k := range []string{"name", "id", "containerPort", "mountPath", "uid"} {
						if kv, ok := v[k]; ok {
							id = k + "=" + strings.TrimSpace(mustJSON(kv))
							break
						}
					}
				case nil:
					id = "null"
				case []any:
					continue
				default:
					id = mustJSON(v)
				}
				if id != "" && seen[id] {
					found = true
				}
				seen[id] = true
			}
			dec.Token()
			return nil
		}
		return tok
	}
	walk()
	return found
}
