package strategicpatch_test

import (
	"errors"
	"fmt"
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/util/mergepatch"

	"github.com/stratadev/strata/schema"
	"github.com/stratadev/strata/strategicpatch"
)

// TestCreateConflicts pins the paths of *ConflictError with overwrite off:
// a conflict is a change the patch makes where current no longer holds what
// original had.
func TestCreateConflicts(t *testing.T) {
	cases := []struct {
		name           string
		orig, mod, cur string
		want           []string // nil: no conflict
	}{
		{
			name: "a scalar both changed",
			orig: `{"name":"a","count":1}`, mod: `{"name":"b","count":1}`, cur: `{"name":"c","count":1}`,
			want: []string{"name"},
		},
		{
			name: "original had it, modified deleted it, current changed it",
			orig: `{"name":"a","count":1}`, mod: `{"count":1}`, cur: `{"name":"c","count":1}`,
			want: []string{"name"},
		},
		{
			name: "a list element others deleted that modified changed",
			orig: `{"items":[{"name":"x","value":"a"},{"name":"y"}]}`,
			mod:  `{"items":[{"name":"x","value":"b"},{"name":"y"}]}`,
			cur:  `{"items":[{"name":"y"}]}`,
			want: []string{"items[0]"},
		},
		{
			name: "a list element others changed that modified deleted",
			orig: `{"items":[{"name":"x","value":"a"},{"name":"y"}]}`,
			mod:  `{"items":[{"name":"y"}]}`,
			cur:  `{"items":[{"name":"x","value":"c"},{"name":"y"}]}`,
			want: []string{"items[0]"},
		},
		{
			name: "a field of a list element both changed",
			orig: `{"items":[{"name":"x","value":"a"}]}`,
			mod:  `{"items":[{"name":"x","value":"b"}]}`,
			cur:  `{"items":[{"name":"x","value":"c"}]}`,
			want: []string{"items[name=x].value"},
		},
		{
			name: "every conflicting path is listed",
			orig: `{"name":"a","count":1,"nested":{"a":"x"}}`,
			mod:  `{"name":"b","nested":{"a":"y"}}`,
			cur:  `{"name":"c","count":2,"nested":{"a":"z"}}`,
			want: []string{"name", "nested.a", "count"},
		},
		{
			name: "modified keeps a value others changed: the patch sets it back",
			orig: `{"name":"a","count":1}`, mod: `{"name":"b","count":1}`, cur: `{"name":"a","count":5}`,
			want: []string{"count"},
		},
		{
			name: "others changed a field modified leaves alone",
			orig: `{"name":"a"}`, mod: `{"name":"b"}`, cur: `{"name":"a","count":5,"nested":{"a":"x"}}`,
		},
		{
			name: "others changed a nested field modified does not set",
			orig: `{"nested":{"a":"x","b":1}}`, mod: `{"nested":{"a":"y","b":1}}`, cur: `{"nested":{"a":"x","b":1,"labels":{"k":"v"}}}`,
		},
		{
			name: "both made the same change",
			orig: `{"name":"a","count":1}`, mod: `{"name":"b","count":1}`, cur: `{"name":"b","count":1}`,
		},
		{
			name: "both deleted the same field",
			orig: `{"name":"a","count":1}`, mod: `{"count":1}`, cur: `{"count":1}`,
		},
		{
			name: "others added a list element, modified changed another",
			orig: `{"items":[{"name":"x","value":"a"}]}`,
			mod:  `{"items":[{"name":"x","value":"b"}]}`,
			cur:  `{"items":[{"name":"x","value":"a"},{"name":"y"}]}`,
		},
	}
	st := schema.ForValue(genDoc{})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := strategicpatch.CreateThreeWay([]byte(c.orig), []byte(c.mod), []byte(c.cur), st, false)
			var ce *strategicpatch.ConflictError
			switch {
			case c.want == nil && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case c.want != nil && !errors.As(err, &ce):
				t.Fatalf("got error %v, want a *ConflictError at %v", err, c.want)
			case c.want != nil && !reflect.DeepEqual(ce.Paths, c.want):
				t.Errorf("conflict paths %q, want %q", ce.Paths, c.want)
			}
			// With overwrite on, the same triple gives a patch.
			if _, err := strategicpatch.CreateThreeWay([]byte(c.orig), []byte(c.mod), []byte(c.cur), st, true); err != nil {
				t.Errorf("overwrite on: %v", err)
			}
		})
	}
}

// TestCreateConflictDecisions compares, on generated triples, strata's
// conflict decision with apimachinery's (mergepatch.IsConflict) and reports
// the disagreements by path; it fails only when strata's decision breaks its
// own rule (see conflictRuleHolds). The decisions agree on about 99% of the
// triples; where they differ, strata reports a conflict apimachinery does
// not, in three known ways:
//
//   - a list without merge strategy others changed, which the patch
//     replaces (args, rules, tolerations): apimachinery compares such lists
//     sorted and deduplicated (scalars) or item by item with the map rule
//     (only keys both sides set), so a reordering or a new member is no
//     conflict there, though the patch throws it away;
//   - a value of a primitive merge list others deleted that modified still
//     has (tags[0]): apimachinery holds that primitive lists never conflict;
//     strata counts putting back what another writer removed;
//   - a field others turned into another kind (nums): apimachinery's check
//     compares the patch with the change only where both are maps or lists.
func TestCreateConflictDecisions(t *testing.T) {
	seed := differentialSeed(t) + 3
	g := newGen(seed)
	var skipped int
	counts := map[string]int{}
	examples := map[string]string{}
	n := createCaseCount()
	for i := range n {
		c := g.nextTriple(&skipped)
		_, serr := strategicpatch.CreateThreeWay(c.orig, c.mod, c.cur, c.st, false)
		_, kerr := referenceThreeWay(c.orig, c.mod, c.cur, c.schema.goType, false)
		var ce *strategicpatch.ConflictError
		sConf, kConf := errors.As(serr, &ce), kerr != nil && mergepatch.IsConflict(kerr)
		if serr != nil && !sConf || kerr != nil && !kConf {
			counts["rejected by one or both"]++
			continue
		}
		if msg := conflictRuleHolds(c, sConf); msg != "" {
			t.Errorf("seed %d case %d: %s\n original: %s\n modified: %s\n  current: %s", seed, i, msg, c.orig, c.mod, c.cur)
		}
		key := fmt.Sprintf("strata conflict %v, apimachinery conflict %v", sConf, kConf)
		counts[key]++
		if sConf != kConf && ce != nil {
			counts[fmt.Sprintf("strata only, at %q", ce.Paths)]++
		}
		if _, ok := examples[key]; !ok && sConf != kConf {
			paths := []string(nil)
			if ce != nil {
				paths = ce.Paths
			}
			examples[key] = fmt.Sprintf("strata paths %q\n original: %s\n modified: %s\n  current: %s", paths, c.orig, c.mod, c.cur)
		}
	}
	t.Logf("seed %d: %d triples: %v", seed, n, counts)
	for k, ex := range examples {
		t.Logf("example of %q:\n%s", k, ex)
	}
}

// conflictRuleHolds checks the half of strata's rule a value walk can
// decide: with no conflict reported, applying the overwrite patch to current
// leaves every map member others changed (current differs from original)
// as current has it. Lists are left out: a merge list changes item by item.
func conflictRuleHolds(c genTriple, conflict bool) string {
	if conflict {
		return ""
	}
	patch, err := strategicpatch.CreateThreeWay(c.orig, c.mod, c.cur, c.st, true)
	if err != nil {
		return ""
	}
	res, err := strategicpatch.ApplyJSON(c.cur, patch, c.st, strategicpatch.Options{})
	if err != nil {
		return ""
	}
	if p := overwritten("", asMap(c.origV), asMap(c.cV), asMap(decodeBytes(res)), c.st); p != "" {
		return "strata reports no conflict, but the patch overwrites " + p
	}
	return ""
}

// overwritten names a value outside lists that current changed from
// original's and the result changes again, or "". A retainKeys map may lose
// others' members: clearing them is that strategy's purpose.
func overwritten(p string, o, c, r map[string]any, t schema.Type) string {
	for _, k := range sortedKeys(c) {
		cv, ov := c[k], o[k]
		rv, inR := r[k]
		if _, isList := cv.([]any); isList || reflect.DeepEqual(cv, ov) || inR && reflect.DeepEqual(rv, cv) {
			continue
		}
		f := fieldOf(t, k)
		cm, ok1 := cv.(map[string]any)
		rm, ok2 := rv.(map[string]any)
		if ok1 && ok2 && !f.Strategy.Has(schema.RetainKeys) {
			if s := overwritten(p+"."+k, asMap(ov), cm, rm, f.Type); s != "" {
				return s
			}
			continue
		}
		if ok1 && ok2 {
			continue
		}
		return p + "." + k
	}
	return ""
}
