package merge3

import (
	"os"
	"path/filepath"
	"testing"

	"go.yaml.in/yaml/v3"
)

// TestSeed003PipelineMerge runs every worked example of seed 003 ("Pipeline
// Merge"): testdata/seed003/NAME/{original,upstream,local,expected}/Kptfile.
// The selectors example follows the seed's text (upstream's selectors replace
// local's), not its printed output, which repeats an earlier example.
func TestSeed003PipelineMerge(t *testing.T) {
	wantConflicts := map[string]int{
		"01-configmap-setters-merge":                  0,
		"02-both-changed-configpath-upstream-wins":    1,
		"03-both-changed-image-version-upstream-wins": 1,
		"04-newly-added-upstream-function":            0,
		"05-deleted-upstream-unchanged-locally":       0,
		"06-same-function-declared-twice-falls-back":  1,
		"07-only-one-function-named-falls-back":       1,
		"08-all-functions-named-merge-by-name":        0,
		"09-selectors-both-changed-upstream-replaces": 1,
	}
	dirs, _ := filepath.Glob("testdata/seed003/*")
	if len(dirs) != len(wantConflicts) {
		t.Fatalf("%d examples on disk, %d expected", len(dirs), len(wantConflicts))
	}
	for _, dir := range dirs {
		name := filepath.Base(dir)
		t.Run(name, func(t *testing.T) {
			out := t.TempDir()
			report, err := Dirs(filepath.Join(dir, "original"), filepath.Join(dir, "upstream"), filepath.Join(dir, "local"), out, Options{})
			if err != nil {
				t.Fatal(err)
			}
			got, want := readYAML(t, filepath.Join(out, "Kptfile")), readYAML(t, filepath.Join(dir, "expected", "Kptfile"))
			if !same(got, want) {
				t.Errorf("merged Kptfile:\n%s\nwant:\n%s", encode(t, got), encode(t, want))
			}
			if n := len(report.Conflicts); n != wantConflicts[name] {
				t.Errorf("%d conflicts reported, want %d: %+v", n, wantConflicts[name], report.Conflicts)
			}
		})
	}
}

func readYAML(t *testing.T, file string) *yaml.Node {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var n yaml.Node
	if err := yaml.Unmarshal(data, &n); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return n.Content[0]
}

func encode(t *testing.T, n *yaml.Node) string {
	t.Helper()
	out, err := yaml.Marshal(n)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}
