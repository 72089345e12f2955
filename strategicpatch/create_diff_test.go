package strategicpatch_test

// The creation differential test: strata's CreateTwoWay and CreateThreeWay
// against apimachinery's CreateTwoWayMergePatch and CreateThreeWayMergePatch
// on the generated pairs and triples of create_gen_test.go. The patches may
// differ in form; applying either to the same document, with apimachinery's
// StrategicMergePatch and with strata's Kubernetes mode, must give one
// result, and both creators must accept and reject the same inputs, except:
//
//	| input                                                   | strata            | apimachinery                     |
//	|---------------------------------------------------------|-------------------|----------------------------------|
//	| a merge list (by the schema) that is a map or a         | rejects (ErrType) | replaces the value               |
//	| primitive in modified                                   |                   |                                  |
//	| merge list items lacking their merge key                | rejects (ErrMissingMergeKey) | writes a patch it may not apply |
//	| duplicate merge keys in modified                        | rejects (ErrDuplicateMergeKey) | keeps both             |
//	| primitives of mixed kinds in a merge list, or values    | diffs the values  | rejects (Go type checks)         |
//	| the Go type does not allow (a list where it has a string) |                 |                                  |
//
// The generator does not write documents holding null or duplicates (see
// excluded), so those are not compared.
//
// Where the two patches give different results, strata's must keep the
// three-way property (create_prop_test.go) and apimachinery's must break it;
// the test counts those cases by apimachinery's fault, which are known
// defects of its CreateThreeWayMergePatch (it merges the current->modified
// delta into the original->modified deletions with its own mergeMap):
//
//   - "merge list not in modified's order": the delta's $setElementOrder is
//     consumed by that merge when the deletions hold nothing for the list,
//     so current's order stays;
//   - "null or directive left in the result": a deletion null or a
//     $retainKeys inside a value current lacks is written into the result
//     as data (apimachinery applies a new value without reading it as a
//     patch);
//   - "apimachinery's patch in an apply intended difference": its patch
//     hits one of the apply engine's intended differences (see
//     differential_test.go), e.g. $deleteFromPrimitiveList beside a list it
//     replaces; Kubernetes mode rejects that patch.
//
// strata's $retainKeys follows apimachinery's rule: a retainKeys map's patch
// (a field's, or a merge list item's when the list has the strategy) lists
// modified's keys when modified has any, and the map changes or current
// holds a key modified lacks.

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	k8ssp "k8s.io/apimachinery/pkg/util/strategicpatch"

	"github.com/stratadev/strata/schema"
	"github.com/stratadev/strata/strategicpatch"
)

// intendedCreateDifference tells whether strata's creation error is one of
// the intended differences above.
func intendedCreateDifference(err error) bool {
	return errors.Is(err, strategicpatch.ErrType) || errors.Is(err, strategicpatch.ErrMissingMergeKey) ||
		errors.Is(err, strategicpatch.ErrDuplicateMergeKey)
}

func referenceTwoWay(o, m []byte, goType any) (p []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			p, err = nil, fmt.Errorf("apimachinery panicked: %v", r)
		}
	}()
	return k8ssp.CreateTwoWayMergePatch(o, m, goType)
}

func referenceThreeWay(o, m, c []byte, goType any, overwrite bool) (p []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			p, err = nil, fmt.Errorf("apimachinery panicked: %v", r)
		}
	}()
	meta, err := k8ssp.NewPatchMetaFromStruct(goType)
	if err != nil {
		return nil, err
	}
	return k8ssp.CreateThreeWayMergePatch(o, m, c, meta, overwrite)
}

// createDiffStats counts a differential run; apiWrong counts, by reason,
// the cases where apimachinery's own patch breaks the three-way property and
// strata's keeps it.
type createDiffStats struct {
	compared, bothRejected, intended, failures int
	apiWrong                                   map[string]int
}

func TestCreateDifferential(t *testing.T) {
	seed := differentialSeed(t) + 2
	g := newGen(seed)
	start := time.Now()
	st := createDiffStats{apiWrong: map[string]int{}}
	var skipped int
	n := createCaseCount()
	for i := range n {
		c := g.nextTriple(&skipped)
		threeWay := i%2 == 1
		var sp, kp []byte
		var serr, kerr error
		if threeWay {
			sp, serr = strategicpatch.CreateThreeWay(c.orig, c.mod, c.cur, c.st, true)
			kp, kerr = referenceThreeWay(c.orig, c.mod, c.cur, c.schema.goType, true)
		} else {
			c.cur, c.cV = c.orig, c.origV // two-way is three-way on original
			sp, serr = strategicpatch.CreateTwoWay(c.orig, c.mod, c.st)
			kp, kerr = referenceTwoWay(c.orig, c.mod, c.schema.goType)
		}
		msg := compareCreated(&st, c, sp, kp, serr, kerr)
		if msg == "" {
			continue
		}
		st.failures++
		if st.failures <= 5 {
			t.Errorf("seed %d case %d (%s, three-way %v): %s\n original: %s\n modified: %s\n  current: %s\n strata patch: %s\n apimachinery patch: %s",
				seed, i, c.schema.name, threeWay, msg, c.orig, c.mod, c.cur, sp, kp)
		}
	}
	t.Logf("seed %d: %d cases (half two-way, half three-way): %d patches compared by result, %d rejected by both, %d intended rejections, apimachinery's patch wrong where strata's is right: %v; %d mismatches, %v",
		seed, n, st.compared, st.bothRejected, st.intended, st.apiWrong, st.failures, time.Since(start).Round(time.Millisecond))
	if st.failures > 0 {
		t.Errorf("seed %d: %d mismatches; rerun with -seed=%d", seed, st.failures, seed-2)
	}
}

// compareCreated checks one case: the decisions, then the results of both
// patches on current under both appliers. It returns what went wrong, or "".
func compareCreated(st *createDiffStats, c genTriple, sp, kp []byte, serr, kerr error) string {
	switch {
	case serr != nil && kerr != nil:
		st.bothRejected++
		return ""
	case serr != nil && intendedCreateDifference(serr):
		st.intended++
		return ""
	case serr != nil:
		return "strata rejects, apimachinery accepts: " + serr.Error()
	case kerr != nil && (mixedMergeLists(c.st, c.origV, c.modV, c.cV) || c.offShape()):
		st.intended++ // apimachinery rejects values its Go type does not allow
		return ""
	case kerr != nil:
		return "apimachinery rejects, strata accepts: " + kerr.Error()
	}
	st.compared++
	sA, sS := runReference(c.cur, sp, c.schema.goType), runStrata(c.cur, sp, c.st)
	kA, kS := runReference(c.cur, kp, c.schema.goType), runStrata(c.cur, kp, c.st)
	if byDesign(c, sA, sS, kA, kS) {
		return ""
	}
	if !agree(sA, sS) {
		return fmt.Sprintf("strata's patch gives\n apimachinery: %v\n       strata: %v", sA, sS)
	}
	if !agree(kA, kS) {
		// Kubernetes mode differs from apimachinery only on the apply
		// engine's intended differences (differential_test.go).
		if !intendedDifference(c.cur, kp) {
			return fmt.Sprintf("apimachinery's patch gives\n apimachinery: %v\n       strata: %v", kA, kS)
		}
		st.apiWrong["apimachinery's patch in an apply intended difference"]++
	}
	if agree(sA, kA) {
		return ""
	}
	sBad, kBad := threeWayBreaks(c, sA), threeWayBreaks(c, kA)
	if len(sBad) > 0 || len(kBad) == 0 {
		return fmt.Sprintf("results differ (strata's breaks the property: %v)\n strata patch: %v\n apimachinery patch: %v", sBad, sA, kA)
	}
	st.apiWrong[apimachineryFault(c, sA, kA)]++
	return ""
}

// byDesign tells whether any applier rejects, each for a by-design reason
// (kubernetesByDesign; apimachinery on the same inputs).
func byDesign(c genTriple, results ...outcome) bool {
	rejected := false
	for _, r := range results {
		if r.err != nil {
			if !kubernetesByDesign(r.err, c) && !mixedMergeLists(c.st, c.origV, c.modV, c.cV) {
				return false
			}
			rejected = true
		}
	}
	return rejected
}

func threeWayBreaks(c genTriple, r outcome) []string {
	var errs []string
	checkThreeWay(&errs, "", asMap(c.origV), asMap(c.modV), asMap(c.cV), r.result, c.st, false)
	return errs
}

// apimachineryFault names why apimachinery's patch result breaks the
// property: a null or a directive left in the result, or merge lists out of
// modified's order, or something else.
func apimachineryFault(c genTriple, sA, kA outcome) string {
	b := mustJSON(kA.result)
	switch {
	case strings.Contains(b, "null") || strings.Contains(b, `"$`):
		return "null or directive left in the result"
	case reflect.DeepEqual(sortedLists(sA.result, c.st), sortedLists(kA.result, c.st)):
		return "merge list not in modified's order"
	}
	return "other"
}

// sortedLists returns v with its merge lists sorted by identity.
func sortedLists(v any, t schema.Type) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			f := fieldOf(t, k)
			x = sortedLists(x, f.Type)
			if l, ok := x.([]any); ok && f.Strategy.Has(schema.Merge) {
				keys := listKeys(f, l)
				l = slices.Clone(l)
				slices.SortFunc(l, func(a, b any) int {
					ia, _ := itemID(a, keys)
					ib, _ := itemID(b, keys)
					return strings.Compare(ia, ib)
				})
				x = l
			}
			out[k] = x
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = sortedLists(x, elemOf(t))
		}
		return out
	}
	return v
}

func (c genTriple) offShape() bool {
	return offShape(c.origV, c.schema.root) || offShape(c.modV, c.schema.root) || offShape(c.cV, c.schema.root)
}
