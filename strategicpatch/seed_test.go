package strategicpatch_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"go.yaml.in/yaml/v3"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/stratadev/strata/schema"
	"github.com/stratadev/strata/strategicpatch"
)

// Test types for the seeds' abstract examples.
type (
	primitivesDoc struct {
		List []string `json:"list,omitempty" patchStrategy:"merge"`
	}
	mapsDoc struct {
		List []mapsItem `json:"list,omitempty" patchStrategy:"merge" patchMergeKey:"mergeKey"`
	}
	mapsItem struct {
		MergeKey string `json:"mergeKey"`
		Other    string `json:"other,omitempty"`
	}
	multiKeyDoc struct {
		List []multiKeyItem `json:"list,omitempty" patchStrategy:"merge" patchMergeKey:"foo,bar"`
	}
	multiKeyItem struct {
		Foo     string `json:"foo"`
		Bar     string `json:"bar"`
		Other   int    `json:"other,omitempty"`
		Another string `json:"another,omitempty"`
	}
)

// testSchemas names the Go types fixtures may use as their schema.
var testSchemas = map[string]any{
	"primitives": primitivesDoc{},
	"maps":       mapsDoc{},
	"multikey":   multiKeyDoc{},
	"pod":        corev1.Pod{},
	"container":  corev1.Container{},
	"deployment": appsv1.Deployment{},
}

// applyCase is one fixture: a document, a patch, and the expected result or
// error in strata's mode. Kubernetes mode is checked against apimachinery
// itself unless Kubernetes names why the two knowingly differ.
type applyCase struct {
	Name       string `yaml:"name"`
	Schema     string `yaml:"schema"`
	Original   string `yaml:"original"`
	Patch      string `yaml:"patch"`
	Expected   string `yaml:"expected"`
	Error      string `yaml:"error"`
	Kubernetes string `yaml:"kubernetes"`
}

func loadCases(t *testing.T, pattern string) []applyCase {
	return loadFixtures[applyCase](t, pattern)
}

// loadFixtures reads every YAML file matching pattern as a list of T.
func loadFixtures[T any](t *testing.T, pattern string) []T {
	t.Helper()
	files, err := filepath.Glob(pattern)
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures match %s: %v", pattern, err)
	}
	var all []T
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var cases []T
		if err := yaml.Unmarshal(data, &cases); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		all = append(all, cases...)
	}
	return all
}

// yamlNode parses a fixture's YAML text.
func yamlNode(t *testing.T, text string) *yaml.Node {
	t.Helper()
	var n yaml.Node
	if err := yaml.Unmarshal([]byte(text), &n); err != nil {
		t.Fatalf("fixture YAML: %v", err)
	}
	return &n
}

// yamlValue turns a YAML node into the generic value its JSON decodes to.
func yamlValue(t *testing.T, n *yaml.Node) any {
	t.Helper()
	var buf bytes.Buffer
	if err := yaml.NewEncoder(&buf).Encode(n); err != nil {
		t.Fatal(err)
	}
	return decodeYAML(t, buf.String())
}

// TestSeedExamples runs every worked example of the specification.
func TestSeedExamples(t *testing.T) { runApplyCases(t, "testdata/seeds/*.yaml") }

// TestApplyCases runs strata's own cases: directives, duplicates, schemas.
func TestApplyCases(t *testing.T) { runApplyCases(t, "testdata/cases/*.yaml") }

func runApplyCases(t *testing.T, pattern string) {
	for _, c := range loadCases(t, pattern) {
		t.Run(c.Name, func(t *testing.T) {
			goType, ok := testSchemas[c.Schema]
			if !ok {
				t.Fatalf("unknown schema %q", c.Schema)
			}
			st := schema.ForValue(goType)
			for _, run := range representations {
				got, err := run.apply([]byte(c.Original), []byte(c.Patch), st, strategicpatch.Options{})
				checkResult(t, run.name, c, got, err)
			}
			checkKubernetesMode(t, c, goType, st)
		})
	}
}

func checkResult(t *testing.T, via string, c applyCase, got any, err error) {
	t.Helper()
	if c.Error != "" {
		if err == nil || err.Error() != c.Error {
			t.Errorf("%s: error\n got: %v\nwant: %s", via, err, c.Error)
		}
		return
	}
	if err != nil {
		t.Fatalf("%s: unexpected error: %v", via, err)
	}
	if want := decodeYAML(t, c.Expected); !reflect.DeepEqual(got, want) {
		t.Errorf("%s: result\n got: %s\nwant: %s", via, mustJSON(got), mustJSON(want))
	}
}

// checkKubernetesMode compares strata's Kubernetes mode with apimachinery on
// the same case, or, for a listed difference, confirms there is one.
func checkKubernetesMode(t *testing.T, c applyCase, goType any, st schema.Type) {
	t.Helper()
	orig, patch := toJSON(t, c.Original), toJSON(t, c.Patch)
	want, wantErr := referenceApply(orig, patch, goType)
	if c.Kubernetes != "" {
		if c.Error == "" && wantErr == nil && reflect.DeepEqual(decodeJSON(t, want), decodeYAML(t, c.Expected)) {
			t.Errorf("listed as differing from apimachinery (%s), but apimachinery gives the same result", c.Kubernetes)
		}
		return
	}
	for _, run := range representations {
		got, err := run.apply([]byte(c.Original), []byte(c.Patch), st, strategicpatch.Options{Compat: strategicpatch.Kubernetes})
		if (err != nil) != (wantErr != nil) {
			t.Errorf("kubernetes mode via %s: error %v, apimachinery's %v", run.name, err, wantErr)
			continue
		}
		if err == nil && !reflect.DeepEqual(got, decodeJSON(t, want)) {
			t.Errorf("kubernetes mode via %s:\n got: %s\nwant: %s", run.name, mustJSON(got), want)
		}
	}
}

// representations runs a YAML fixture through each document representation
// and returns the result as a generic value.
var representations = []struct {
	name  string
	apply func(orig, patch []byte, st schema.Type, opts strategicpatch.Options) (any, error)
}{
	{"json", func(orig, patch []byte, st schema.Type, opts strategicpatch.Options) (any, error) {
		o, err := sigsyaml.YAMLToJSON(orig)
		if err != nil {
			return nil, err
		}
		p, err := sigsyaml.YAMLToJSON(patch)
		if err != nil {
			return nil, err
		}
		res, err := strategicpatch.ApplyJSON(o, p, st, opts)
		if err != nil {
			return nil, err
		}
		var v any
		if err := json.Unmarshal(res, &v); err != nil {
			return nil, err
		}
		return v, nil
	}},
	{"yaml", func(orig, patch []byte, st schema.Type, opts strategicpatch.Options) (any, error) {
		var o, p yaml.Node
		if err := yaml.Unmarshal(orig, &o); err != nil {
			return nil, err
		}
		if err := yaml.Unmarshal(patch, &p); err != nil {
			return nil, err
		}
		res, err := strategicpatch.ApplyYAML(&o, &p, st, opts)
		if err != nil {
			return nil, err
		}
		var buf bytes.Buffer
		if err := yaml.NewEncoder(&buf).Encode(res); err != nil {
			return nil, err
		}
		j, err := sigsyaml.YAMLToJSON(buf.Bytes())
		if err != nil {
			return nil, err
		}
		var v any
		if err := json.Unmarshal(j, &v); err != nil {
			return nil, err
		}
		return v, nil
	}},
}

func toJSON(t *testing.T, y string) []byte {
	t.Helper()
	j, err := sigsyaml.YAMLToJSON([]byte(y))
	if err != nil {
		t.Fatalf("fixture YAML: %v", err)
	}
	return j
}

func decodeYAML(t *testing.T, y string) any { return decodeJSON(t, toJSON(t, y)) }

func decodeJSON(t *testing.T, j []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(j, &v); err != nil {
		t.Fatalf("decoding %s: %v", j, err)
	}
	return v
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
