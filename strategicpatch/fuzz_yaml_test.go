package strategicpatch_test

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"go.yaml.in/yaml/v3"
	corev1 "k8s.io/api/core/v1"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/stratadev/strata/schema"
	"github.com/stratadev/strata/strategicpatch"
)

// FuzzApplyYAML applies arbitrary YAML patches to arbitrary YAML documents,
// with and without a schema, in both modes. It must never panic or change its
// inputs; an accepted result must encode; and where both documents are plain
// JSON data, the YAML path must agree with the JSON path on accepting and on
// the result.
func FuzzApplyYAML(f *testing.F) {
	for _, c := range loadFuzzSeeds() {
		f.Add(c[0], c[1])
	}
	f.Add("spec:\n  containers: [{name: a, image: x}]\n", "spec:\n  containers: [{name: b}]\n")
	f.Add("a: &x {b: 1}\nc: *x\n", "c: {d: 2}\n")
	f.Add("metadata: {finalizers: [a, b]}\n", "metadata:\n  $setElementOrder/finalizers: [b, a]\n")
	pod := schema.ForValue(corev1.Pod{})
	f.Fuzz(func(t *testing.T, doc, patch string) {
		var d, p yaml.Node
		if yaml.Unmarshal([]byte(doc), &d) != nil || yaml.Unmarshal([]byte(patch), &p) != nil {
			return
		}
		before := encodeNodes(t, &d, &p)
		for _, st := range []schema.Type{nil, pod} {
			for _, mode := range []strategicpatch.Compat{strategicpatch.Strata, strategicpatch.Kubernetes} {
				res, err := strategicpatch.ApplyYAML(&d, &p, st, strategicpatch.Options{Compat: mode})
				if after := encodeNodes(t, &d, &p); !bytes.Equal(before, after) {
					t.Fatalf("ApplyYAML changed its inputs:\n%s\n->\n%s", before, after)
				}
				if err == nil {
					if _, encErr := yaml.Marshal(res); encErr != nil {
						t.Fatalf("result does not encode: %v", encErr)
					}
				}
				compareWithJSON(t, doc, patch, st, mode, res, err)
			}
		}
	})
}

// compareWithJSON runs the same documents through ApplyJSON when both are
// plain JSON data (no aliases, tags or non-string keys that a conversion
// would change) and fails when the two representations disagree.
func compareWithJSON(t *testing.T, doc, patch string, st schema.Type, mode strategicpatch.Compat, res *yaml.Node, yerr error) {
	dj, ok1 := plainJSON(doc)
	pj, ok2 := plainJSON(patch)
	if !ok1 || !ok2 {
		return
	}
	jres, jerr := strategicpatch.ApplyJSON(dj, pj, st, strategicpatch.Options{Compat: mode})
	if (yerr == nil) != (jerr == nil) {
		t.Fatalf("mode %d: YAML path error %v, JSON path error %v\ndoc: %s\npatch: %s", mode, yerr, jerr, dj, pj)
	}
	if yerr != nil {
		return
	}
	// Read the result node's value directly: re-encoding it would go through
	// yaml.v3's encoder, which writes a flow map's implicit null as "".
	var v any
	if res.Decode(&v) != nil {
		return
	}
	yj, err := json.Marshal(v)
	if err != nil {
		return // a value JSON cannot hold (a map with non-string keys)
	}
	var a, b any
	if json.Unmarshal(yj, &a) != nil || json.Unmarshal(jres, &b) != nil {
		t.Fatalf("results do not decode: %s / %s", yj, jres)
	}
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("mode %d: YAML path %s, JSON path %s\ndoc: %s\npatch: %s", mode, yj, jres, dj, pj)
	}
}

// plainJSON converts YAML text to JSON when the text is plain data: no
// anchors, aliases, tags or merge keys, and a conversion that round-trips.
func plainJSON(text string) ([]byte, bool) {
	for _, marker := range []string{"&", "*", "!", "<<"} {
		if bytes.Contains([]byte(text), []byte(marker)) {
			return nil, false
		}
	}
	j, err := sigsyaml.YAMLToJSON([]byte(text))
	if err != nil || !json.Valid(j) {
		return nil, false
	}
	var n yaml.Node
	if yaml.Unmarshal([]byte(text), &n) != nil || !plainNode(&n) {
		return nil, false
	}
	return j, true
}

// plainNode reports whether every scalar reads the same in YAML 1.2 (yaml.v3)
// and YAML 1.1 (sigs.k8s.io/yaml): strings, ints, floats, true/false, null.
func plainNode(n *yaml.Node) bool {
	if n.Kind == yaml.ScalarNode {
		switch n.ShortTag() {
		case "!!str":
			var v any
			err := sigsyaml.Unmarshal([]byte(n.Value), &v)
			s, isStr := v.(string)
			return n.Style != 0 || (err == nil && isStr && s == n.Value)
		case "!!int", "!!float":
			_, err := json.Number(n.Value).Float64()
			return err == nil
		case "!!bool":
			return n.Value == "true" || n.Value == "false"
		case "!!null":
			return n.Value == "null" || n.Value == "~" || n.Value == ""
		}
		return false
	}
	if n.Kind == yaml.MappingNode {
		seen := map[string]bool{}
		for i := 0; i < len(n.Content); i += 2 {
			k := n.Content[i]
			if k.Kind != yaml.ScalarNode || k.ShortTag() != "!!str" || seen[k.Value] {
				return false // a conversion would change or drop the key
			}
			seen[k.Value] = true
		}
	}
	for _, c := range n.Content {
		if !plainNode(c) {
			return false
		}
	}
	return true
}

func encodeNodes(t *testing.T, nodes ...*yaml.Node) []byte {
	var buf bytes.Buffer
	for _, n := range nodes {
		out, err := yaml.Marshal(n)
		if err != nil {
			t.Fatalf("input does not encode: %v", err)
		}
		buf.Write(out)
		buf.WriteString("\x00")
	}
	return buf.Bytes()
}

// loadFuzzSeeds takes the seed fixtures' documents and patches as seeds.
func loadFuzzSeeds() [][2]string {
	var seeds [][2]string
	t := &testing.T{}
	for _, pattern := range []string{"testdata/seeds/*.yaml", "testdata/cases/*.yaml", "testdata/reject/*.yaml"} {
		for _, c := range loadFixtures[applyCase](t, pattern) {
			seeds = append(seeds, [2]string{c.Original, c.Patch})
		}
	}
	return seeds
}
