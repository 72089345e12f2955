package strategicpatch_test

// Properties of patch creation on generated documents (create_gen_test.go):
//
//   - round trip: ApplyJSON(original, CreateTwoWay(original, modified)) is
//     modified, merge lists in order, in both modes, and the same through
//     CreateTwoWayYAML and ApplyYAML;
//   - three-way: applying CreateThreeWay(original, modified, current) to
//     current gives modified's value on every field modified sets, keeps
//     what only current has, and removes what original had and modified
//     dropped — for CreateThreeWay and for CreateThreeWayYAML.
//
// Excluded by design: documents with duplicate merge keys or set values,
// and documents holding null (see excluded); in Kubernetes mode, documents
// with fields the Go type lacks (ErrSchema: apimachinery rejects them) and
// with merge lists of primitives of mixed kinds (ErrType, as apimachinery). The
// creator rejects a merge list that modified turns into a map or a primitive
// (ErrType) and list items lacking their merge key (ErrMissingMergeKey);
// those pairs are counted, not checked.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/stratadev/strata/schema"
	"github.com/stratadev/strata/strategicpatch"
)

var bothModes = []strategicpatch.Options{{}, {Compat: strategicpatch.Kubernetes}}

// creationRejected tells whether err is one of the creator's bad-input
// rules the generator reaches.
func creationRejected(err error) bool {
	return errors.Is(err, strategicpatch.ErrType) || errors.Is(err, strategicpatch.ErrMissingMergeKey)
}

func createCaseCount() int {
	if testing.Short() {
		return 300
	}
	return *createCases
}

func TestCreateTwoWayRoundTrip(t *testing.T) {
	seed := differentialSeed(t)
	g := newGen(seed)
	start := time.Now()
	var checked, rejected, skipped, failures int
	for i := range createCaseCount() {
		c := g.nextTriple(&skipped)
		patch, err := strategicpatch.CreateTwoWay(c.orig, c.mod, c.st)
		if creationRejected(err) {
			rejected++
			continue
		}
		if err != nil {
			failures++
			t.Errorf("seed %d case %d: CreateTwoWay(%s, %s): %v", seed, i, c.orig, c.mod, err)
			continue
		}
		checked++
		for _, opts := range bothModes {
			if msg := roundTrip(c, patch, opts); msg != "" {
				failures++
				if failures <= 5 {
					t.Errorf("seed %d case %d (%s, mode %d): %s\n original: %s\n modified: %s\n    patch: %s", seed, i, c.schema.name, opts.Compat, msg, c.orig, c.mod, patch)
				}
			}
		}
		if msg := roundTripYAML(c); msg != "" {
			failures++
			if failures <= 5 {
				t.Errorf("seed %d case %d (%s, YAML): %s\n original: %s\n modified: %s", seed, i, c.schema.name, msg, c.orig, c.mod)
			}
		}
	}
	t.Logf("seed %d: %d pairs round-tripped in both modes and YAML, %d rejected by the creator, %d candidates skipped, %v",
		seed, checked, rejected, skipped, time.Since(start).Round(time.Millisecond))
	if failures > 0 {
		t.Errorf("seed %d: %d failures; rerun with -seed=%d", seed, failures, seed)
	}
}

// roundTrip applies patch to original and compares the result with
// modified; it returns what went wrong, or "".
func roundTrip(c genTriple, patch []byte, opts strategicpatch.Options) string {
	res, err := strategicpatch.ApplyJSON(c.orig, patch, c.st, opts)
	if opts.Compat == strategicpatch.Kubernetes && kubernetesByDesign(err, c) {
		return ""
	}
	if err != nil {
		return "applying the patch: " + err.Error()
	}
	if got := decodeBytes(res); !reflect.DeepEqual(got, c.modV) {
		return "the patch gives " + string(res)
	}
	return ""
}

func roundTripYAML(c genTriple) string {
	o, m := jsonNode(c.orig), jsonNode(c.mod)
	patch, err := strategicpatch.CreateTwoWayYAML(o, m, c.st)
	if err != nil {
		return "CreateTwoWayYAML: " + err.Error()
	}
	if !bytes.Equal(encodeYAML(o), encodeYAML(jsonNode(c.orig))) || !bytes.Equal(encodeYAML(m), encodeYAML(jsonNode(c.mod))) {
		return "CreateTwoWayYAML changed its inputs"
	}
	res, err := strategicpatch.ApplyYAML(o, patch, c.st, strategicpatch.Options{})
	if err != nil {
		return fmt.Sprintf("applying the YAML patch %s: %v", encodeYAML(patch), err)
	}
	if got := decodeYAMLBytes(encodeYAML(res)); !reflect.DeepEqual(got, c.modV) {
		return fmt.Sprintf("the YAML patch %s gives %s", encodeYAML(patch), mustJSON(got))
	}
	return ""
}

func TestCreateThreeWayProperty(t *testing.T) {
	seed := differentialSeed(t) + 1
	g := newGen(seed)
	start := time.Now()
	var checked, rejected, skipped, failures int
	for i := range createCaseCount() {
		c := g.nextTriple(&skipped)
		patch, err := strategicpatch.CreateThreeWay(c.orig, c.mod, c.cur, c.st, true)
		if creationRejected(err) {
			rejected++
			continue
		}
		if err != nil {
			failures++
			t.Errorf("seed %d case %d: CreateThreeWay: %v\n original: %s\n modified: %s\n  current: %s", seed, i, err, c.orig, c.mod, c.cur)
			continue
		}
		checked++
		ypatch, err := yamlThreeWayPatch(c)
		if err != nil {
			failures++
			t.Errorf("seed %d case %d: CreateThreeWayYAML: %v (CreateThreeWay accepted)", seed, i, err)
			continue
		}
		for _, opts := range bothModes {
			msgs := append(threeWayResult(c, patch, opts), prefixed("YAML patch: ", threeWayResult(c, ypatch, opts))...)
			if len(msgs) == 0 {
				continue
			}
			failures++
			if failures <= 5 {
				t.Errorf("seed %d case %d (%s, mode %d): %v\n original: %s\n modified: %s\n  current: %s\n    patch: %s",
					seed, i, c.schema.name, opts.Compat, msgs, c.orig, c.mod, c.cur, patch)
			}
		}
	}
	t.Logf("seed %d: %d triples checked in both modes, %d rejected by the creator, %d candidates skipped, %v",
		seed, checked, rejected, skipped, time.Since(start).Round(time.Millisecond))
	if failures > 0 {
		t.Errorf("seed %d: %d failures; rerun with -seed=%d", seed, failures, seed-1)
	}
}

// yamlThreeWayPatch creates the triple's patch through the yaml.Node
// creator and returns it as JSON.
func yamlThreeWayPatch(c genTriple) ([]byte, error) {
	var nodes [3]yaml.Node
	for i, doc := range [3][]byte{c.orig, c.mod, c.cur} {
		if err := yaml.Unmarshal(doc, &nodes[i]); err != nil {
			return nil, err
		}
	}
	p, err := strategicpatch.CreateThreeWayYAML(&nodes[0], &nodes[1], &nodes[2], c.st, true)
	if err != nil {
		return nil, err
	}
	var v any
	if err := p.Decode(&v); err != nil {
		return nil, err
	}
	return json.Marshal(v)
}

func prefixed(prefix string, msgs []string) []string {
	for i := range msgs {
		msgs[i] = prefix + msgs[i]
	}
	return msgs
}

// threeWayResult applies patch to current and checks the three-way property.
func threeWayResult(c genTriple, patch []byte, opts strategicpatch.Options) []string {
	res, err := strategicpatch.ApplyJSON(c.cur, patch, c.st, opts)
	if opts.Compat == strategicpatch.Kubernetes && kubernetesByDesign(err, c) {
		return nil
	}
	if err != nil {
		return []string{"applying the patch: " + err.Error()}
	}
	var errs []string
	checkThreeWay(&errs, "", asMap(c.origV), asMap(c.modV), asMap(c.cV), decodeBytes(res), c.st, false)
	return errs
}

func asMap(v any) map[string]any { m, _ := v.(map[string]any); return m }
func asList(v any) []any         { l, _ := v.([]any); return l }

// checkThreeWay checks result r of one map against original o, modified m
// and current c (o and c nil when absent or not maps). In a map with the
// retainKeys strategy, the patch may clear what only current has.
func checkThreeWay(errs *[]string, p string, o, m, c map[string]any, rv any, t schema.Type, retain bool) {
	r, ok := rv.(map[string]any)
	if !ok {
		*errs = append(*errs, fmt.Sprintf("%s: result %s, want a map", p, mustJSON(rv)))
		return
	}
	for _, k := range sortedKeys(m) {
		mv := m[k]
		rv, ok := r[k]
		if !ok {
			*errs = append(*errs, fmt.Sprintf("%s.%s: missing, modified sets %s", p, k, mustJSON(mv)))
			continue
		}
		checkValue(errs, p+"."+k, o[k], mv, c[k], rv, fieldOf(t, k))
	}
	for _, k := range sortedKeys(r) {
		rv := r[k]
		_, inM := m[k]
		cv, inC := c[k]
		if !inM && !inC {
			*errs = append(*errs, fmt.Sprintf("%s.%s: %s appears from nowhere", p, k, mustJSON(rv)))
		}
		if _, inO := o[k]; !inM && inC && inO {
			*errs = append(*errs, fmt.Sprintf("%s.%s: original had it, modified dropped it, still %s", p, k, mustJSON(rv)))
		}
		if !inM && inC && !reflect.DeepEqual(rv, cv) {
			*errs = append(*errs, fmt.Sprintf("%s.%s: only current has it, changed from %s to %s", p, k, mustJSON(cv), mustJSON(rv)))
		}
	}
	for _, k := range sortedKeys(c) {
		cv := c[k]
		_, inM := m[k]
		_, inO := o[k]
		if _, inR := r[k]; !inM && !inO && !inR && !retain {
			*errs = append(*errs, fmt.Sprintf("%s.%s: only current has it (%s), but it is gone", p, k, mustJSON(cv)))
		}
	}
}

func checkValue(errs *[]string, p string, ov, mv, cv, rv any, f schema.Field) {
	switch mv.(type) {
	case map[string]any:
		if cm, ok := cv.(map[string]any); ok && !f.Strategy.Has(schema.Replace) {
			checkThreeWay(errs, p, asMap(ov), mv.(map[string]any), cm, rv, f.Type, f.Strategy.Has(schema.RetainKeys))
			return
		}
	case []any:
		if cl, ok := cv.([]any); ok && f.Strategy.Has(schema.Merge) {
			checkList(errs, p, asList(ov), mv.([]any), cl, rv, f)
			return
		}
	}
	if !reflect.DeepEqual(mv, rv) {
		*errs = append(*errs, fmt.Sprintf("%s: %s, modified sets %s", p, mustJSON(rv), mustJSON(mv)))
	}
}

// checkList checks a merge list: modified's items are there, in modified's
// order, maps checked member by member; current's other items stay unless
// original had them.
func checkList(errs *[]string, p string, ol, ml, cl []any, rv any, f schema.Field) {
	rl, ok := rv.([]any)
	if !ok {
		*errs = append(*errs, fmt.Sprintf("%s: result %s, want a list", p, mustJSON(rv)))
		return
	}
	keys := listKeys(f, ml, cl, ol)
	os, cs, rs := byID(ol, keys), byID(cl, keys), byID(rl, keys)
	last := -1
	for _, mi := range ml {
		id, _ := itemID(mi, keys)
		at, ok := rs[id]
		if !ok {
			*errs = append(*errs, fmt.Sprintf("%s[%s]: missing, modified has it", p, id))
			continue
		}
		if at < last {
			*errs = append(*errs, fmt.Sprintf("%s[%s]: out of modified's order", p, id))
		}
		last = at
		if mm, isMap := mi.(map[string]any); isMap {
			checkThreeWay(errs, p+"["+id+"]", itemAt(ol, os, id), mm, itemAt(cl, cs, id), rl[at], elemOf(f.Type), f.Strategy.Has(schema.RetainKeys))
		}
	}
	ms := byID(ml, keys)
	for id, ci := range cs {
		_, inM := ms[id]
		_, inO := os[id]
		ri, inR := rs[id]
		switch {
		case inM:
		case inO && inR:
			*errs = append(*errs, fmt.Sprintf("%s[%s]: original had it, modified dropped it, still there", p, id))
		case !inO && !inR:
			*errs = append(*errs, fmt.Sprintf("%s[%s]: only current has it, but it is gone", p, id))
		case !inO && !reflect.DeepEqual(rl[ri], cl[ci]):
			*errs = append(*errs, fmt.Sprintf("%s[%s]: only current has it, changed to %s", p, id, mustJSON(rl[ri])))
		}
	}
	for id := range rs {
		_, inM := ms[id]
		if _, inC := cs[id]; !inM && !inC {
			*errs = append(*errs, fmt.Sprintf("%s[%s]: appears from nowhere", p, id))
		}
	}
}

// byID indexes a list by item identity (first occurrence).
func byID(l []any, keys []string) map[string]int {
	out := make(map[string]int, len(l))
	for i, it := range l {
		if id, ok := itemID(it, keys); ok {
			if _, dup := out[id]; !dup {
				out[id] = i
			}
		}
	}
	return out
}

func itemAt(l []any, idx map[string]int, id string) map[string]any {
	if i, ok := idx[id]; ok {
		return asMap(l[i])
	}
	return nil
}

func decodeBytes(b []byte) any {
	var v any
	if err := jsonUnmarshal(b, &v); err != nil {
		return fmt.Sprintf("invalid JSON %q: %v", b, err)
	}
	return v
}

// jsonNode reads a JSON document as a YAML node tree (JSON is YAML).
func jsonNode(b []byte) *yaml.Node {
	var n yaml.Node
	if err := yaml.Unmarshal(b, &n); err != nil {
		panic(err)
	}
	return &n
}

func encodeYAML(n *yaml.Node) []byte {
	var buf bytes.Buffer
	if err := yaml.NewEncoder(&buf).Encode(n); err != nil {
		return []byte("unencodable: " + err.Error())
	}
	return buf.Bytes()
}

func decodeYAMLBytes(b []byte) any {
	j, err := yamlToJSON(b)
	if err != nil {
		return "invalid YAML: " + err.Error()
	}
	return decodeBytes(j)
}
