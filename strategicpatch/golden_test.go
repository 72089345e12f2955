package strategicpatch_test

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/stratadev/strata/schema"
	"github.com/stratadev/strata/strategicpatch"
)

var update = flag.Bool("update", false, "rewrite golden files")

// TestYAMLGolden patches testdata/yaml/NAME.original.yaml with
// NAME.patch.yaml and compares the output, byte for byte, with
// NAME.golden.yaml: comments, key order and quoting must survive.
func TestYAMLGolden(t *testing.T) {
	originals, _ := filepath.Glob("testdata/yaml/*.original.yaml")
	if len(originals) == 0 {
		t.Fatal("no golden fixtures")
	}
	schemas := map[string]schema.Type{
		"Deployment": schema.ForValue(appsv1.Deployment{}),
		"Pod":        schema.ForValue(corev1.Pod{}),
	}
	for _, orig := range originals {
		name := strings.TrimSuffix(filepath.Base(orig), ".original.yaml")
		t.Run(name, func(t *testing.T) {
			o := readNode(t, orig)
			p := readNode(t, filepath.Join("testdata/yaml", name+".patch.yaml"))
			var head struct{ Kind string }
			if err := o.Decode(&head); err != nil {
				t.Fatal(err)
			}
			before := encode(t, o)
			res, err := strategicpatch.ApplyYAML(o, p, schemas[head.Kind], strategicpatch.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if after := encode(t, o); !bytes.Equal(before, after) {
				t.Errorf("the original was modified:\n%s", after)
			}
			got := encode(t, res)
			golden := filepath.Join("testdata/yaml", name+".golden.yaml")
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("output differs from %s:\n%s", golden, got)
			}
		})
	}
}

func readNode(t *testing.T, file string) *yaml.Node {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var n yaml.Node
	if err := yaml.Unmarshal(data, &n); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return &n
}

func encode(t *testing.T, n *yaml.Node) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(n); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
