package strategicpatch_test

// The differential test: strata's Kubernetes mode against apimachinery's
// strategicpatch, on pseudo-random documents and patches (gen_test.go) over
// a small test schema and the real Deployment and Pod types.
//
// Intended differences. apimachinery's answer is not reproduced in these
// cases; the generator stays away from them, and TestKubernetesIntendedDifferences
// pins strata's deterministic answer for each:
//
//	| case                                            | why strata differs                                                   |
//	|-------------------------------------------------|----------------------------------------------------------------------|
//	| one patch adds and deletes one primitive value  | apimachinery's result depends on Go map iteration order; deletion wins |
//	| duplicate merge keys in a patch list            | apimachinery merges both into one element; strata rejects the patch  |
//	| duplicate values in a live primitive list       | apimachinery's dedupe aliases the original slice; strata keeps first occurrences |
//	| $setElementOrder on a list without merge strategy | apimachinery sorts a replaced list by it; strata rejects it          |
//	| $deleteFromPrimitiveList on a list of maps      | apimachinery compares maps to values (never equal); strata rejects   |
//	| $deleteFromPrimitiveList beside a replaced list | apimachinery's result depends on map iteration order; strata rejects |
//	| numbers beyond float64 precision                | apimachinery rounds them through float64; strata keeps their text    |

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stratadev/strata/schema"
	"github.com/stratadev/strata/strategicpatch"
)

var (
	diffSeed  = flag.String("seed", "", "seed of the differential test (default $STRATA_DIFF_SEED, else fixed; \"random\" picks one)")
	diffCases = flag.Int("diffcases", 10000, "number of cases the differential test generates")
)

const defaultDiffSeed = 20260801

func differentialSeed(t *testing.T) uint64 {
	s := *diffSeed
	if s == "" {
		s = os.Getenv("STRATA_DIFF_SEED")
	}
	switch s {
	case "":
		return defaultDiffSeed
	case "random":
		return uint64(time.Now().UnixNano())
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		t.Fatalf("bad seed %q: %v", s, err)
	}
	return n
}

// outcome is one engine's answer to a case.
type outcome struct {
	err    error
	result any
	panic  bool
}

func (o outcome) String() string {
	if o.err != nil {
		return "error: " + o.err.Error()
	}
	b, _ := json.Marshal(o.result)
	return string(b)
}

func runReference(orig, patch []byte, goType any) outcome {
	out, err := referenceApply(orig, patch, goType)
	if err != nil {
		o := outcome{err: err}
		if len(err.Error()) > 22 && err.Error()[:22] == "apimachinery panicked:" {
			o.panic = true
		}
		return o
	}
	var v any
	if err := json.Unmarshal(out, &v); err != nil {
		return outcome{err: fmt.Errorf("apimachinery wrote invalid JSON: %v", err)}
	}
	return outcome{result: v}
}

func runStrata(orig, patch []byte, st schema.Type) outcome {
	out, err := strategicpatch.ApplyJSON(orig, patch, st, strategicpatch.Options{Compat: strategicpatch.Kubernetes})
	if err != nil {
		return outcome{err: err}
	}
	var v any
	if err := json.Unmarshal(out, &v); err != nil {
		return outcome{err: fmt.Errorf("strata wrote invalid JSON %q: %v", out, err)}
	}
	return outcome{result: v}
}

// agree reports whether both engines gave the same answer.
func agree(ref, got outcome) bool {
	if (ref.err != nil) != (got.err != nil) {
		return false
	}
	return ref.err != nil || reflect.DeepEqual(ref.result, got.result)
}

func TestKubernetesDifferential(t *testing.T) {
	seed := differentialSeed(t)
	g := newGen(seed)
	n := *diffCases
	if testing.Short() {
		n = 300
	}
	start := time.Now()
	var accepted, rejected, failures int
	for i := range n {
		c := g.next()
		st := schema.ForValue(c.schema.goType)
		ref := runReference(c.orig, c.patch, c.schema.goType)
		if ref.panic {
			continue
		}
		got := runStrata(c.orig, c.patch, st)
		if ref.err != nil {
			rejected++
		} else {
			accepted++
		}
		if agree(ref, got) {
			continue
		}
		failures++
		if failures > 5 {
			continue
		}
		mo, mp := minimize(c.origV, c.patchV, c.schema.goType, st)
		t.Errorf("seed %d case %d (%s) mismatch\n original: %s\n    patch: %s\n apimachinery: %v\n       strata: %v\nminimized:\n original: %s\n    patch: %s\n apimachinery: %v\n       strata: %v",
			seed, i, c.schema.name, c.orig, c.patch, ref, got,
			mustJSON(mo), mustJSON(mp), runReference(marshal(mo), marshal(mp), c.schema.goType), runStrata(marshal(mo), marshal(mp), st))
	}
	t.Logf("seed %d: %d cases (%d accepted, %d rejected by both engines or one), %d mismatches, %v",
		seed, accepted+rejected, accepted, rejected, failures, time.Since(start).Round(time.Millisecond))
	if failures > 0 {
		t.Errorf("seed %d: %d mismatches; rerun with -seed=%d", seed, failures, seed)
	}
}

func marshal(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

// minimize shrinks a mismatching case greedily: it drops map members and
// list items from the patch, then from the document, while the engines
// still disagree.
func minimize(orig, patch any, goType any, st schema.Type) (any, any) {
	fails := func(o, p any) bool {
		ref := runReference(marshal(o), marshal(p), goType)
		return !ref.panic && !agree(ref, runStrata(marshal(o), marshal(p), st))
	}
	for changed := true; changed; {
		changed = false
		for _, cand := range shrinks(patch) {
			if fails(orig, cand) {
				patch, changed = cand, true
				break
			}
		}
		if changed {
			continue
		}
		for _, cand := range shrinks(orig) {
			if fails(cand, patch) {
				orig, changed = cand, true
				break
			}
		}
	}
	return orig, patch
}

// shrinks lists the values one step smaller than v: one map member or list
// item fewer, anywhere in it.
func shrinks(v any) []any {
	var out []any
	switch v := v.(type) {
	case map[string]any:
		for k := range v {
			c := cloneMap(v)
			delete(c, k)
			out = append(out, c)
			for _, s := range shrinks(v[k]) {
				c := cloneMap(v)
				c[k] = s
				out = append(out, c)
			}
		}
	case []any:
		for i := range v {
			c := append(append([]any{}, v[:i]...), v[i+1:]...)
			out = append(out, c)
			for _, s := range shrinks(v[i]) {
				c := append([]any{}, v...)
				c[i] = s
				out = append(out, c)
			}
		}
	}
	return out
}

func cloneMap(m map[string]any) map[string]any {
	c := make(map[string]any, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

// TestKubernetesIntendedDifferences pins Kubernetes mode's deterministic
// answer for each intended difference in the table at the top of this file.
func TestKubernetesIntendedDifferences(t *testing.T) {
	cases := []compatCase{
		{
			name:   "one patch adds and deletes one primitive value",
			goType: genDoc{}, orig: `{"tags":["a"]}`,
			patch: `{"tags":["b"],"$deleteFromPrimitiveList/tags":["b"]}`,
			want:  `{"tags":["a"]}`,
		},
		{
			name:   "duplicate merge keys in a patch list",
			goType: genDoc{}, orig: `{"items":[{"name":"a"}]}`,
			patch: `{"items":[{"name":"a","value":"x"},{"name":"a","port":1}]}`,
			want:  "error",
		},
		{
			name:   "duplicate values in a live primitive list",
			goType: genDoc{}, orig: `{"tags":["a","b","a","c"]}`,
			patch: `{"tags":["d"]}`,
			want:  `{"tags":["d","a","b","c"]}`,
		},
		{
			name:   "$setElementOrder on a list without merge strategy",
			goType: genDoc{}, orig: `{"args":["a","b"]}`,
			patch: `{"$setElementOrder/args":["c","b"],"args":["c","b"]}`,
			want:  "error",
		},
		{
			name:   "$deleteFromPrimitiveList aimed at a list of maps",
			goType: genDoc{}, orig: `{"items":[{"name":"a"}]}`,
			patch: `{"$deleteFromPrimitiveList/items":[{"name":"a"}]}`,
			want:  "error",
		},
		{
			name:   "$deleteFromPrimitiveList beside a replaced list",
			goType: genDoc{}, orig: `{"args":["a","b"]}`,
			patch: `{"args":["c","a"],"$deleteFromPrimitiveList/args":["a"]}`,
			want:  "error",
		},
		{
			name:   "numbers beyond float64 precision",
			goType: genDoc{}, orig: `{"nums":[1]}`,
			patch: `{"count":12345678901234567891,"nums":[12345678901234567891]}`,
			want:  `{"count":12345678901234567891,"nums":[12345678901234567891,1]}`,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := applyCompat(t, c)
			if c.want != "error" && got != "error" {
				// Compare the text too: numbers must survive exactly.
				var a, b any
				dec := func(s string, v *any) {
					d := json.NewDecoder(strings.NewReader(s))
					d.UseNumber()
					if err := d.Decode(v); err != nil {
						t.Fatal(err)
					}
				}
				dec(got, &a)
				dec(c.want, &b)
				if !reflect.DeepEqual(a, b) {
					t.Errorf("kubernetes mode gives %s, want %s", got, c.want)
				}
				return
			}
			if got != c.want {
				t.Errorf("kubernetes mode gives %s, want %s", got, c.want)
			}
		})
	}
}
