package merge3

import (
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the expected directories of scenario tests")

// TestScenarioUpdate merges testdata/scenarios/update and compares the
// result, file by file and byte by byte, with its expected directory:
// local's comments and list style survive, a resource follows upstream's
// move, deletions and additions land where kpt puts them.
func TestScenarioUpdate(t *testing.T) {
	dir := "testdata/scenarios/update"
	out := filepath.Join(t.TempDir(), "out")
	report, err := Dirs(filepath.Join(dir, "original"), filepath.Join(dir, "upstream"), filepath.Join(dir, "local"), out, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(report.Conflicts) != 0 {
		t.Errorf("conflicts: %+v", report.Conflicts)
	}
	if want := []string{"gone.yaml: v1 ConfigMap gone"}; !reflect.DeepEqual(report.KeptDeleted, want) {
		t.Errorf("kept deleted: %v, want %v", report.KeptDeleted, want)
	}
	expected := filepath.Join(dir, "expected")
	if *update {
		os.RemoveAll(expected)
		if err := os.CopyFS(expected, os.DirFS(out)); err != nil {
			t.Fatal(err)
		}
	}
	compareTrees(t, out, expected)
}

// compareTrees fails unless two directories hold the same files with the
// same bytes.
func compareTrees(t *testing.T, got, want string) {
	t.Helper()
	g, w := readTree(t, got), readTree(t, want)
	for rel, data := range w {
		if gd, ok := g[rel]; !ok {
			t.Errorf("missing %s", rel)
		} else if gd != data {
			t.Errorf("%s:\n%s\nwant:\n%s", rel, gd, data)
		}
	}
	for rel := range g {
		if _, ok := w[rel]; !ok {
			t.Errorf("unexpected %s:\n%s", rel, g[rel])
		}
	}
}

func readTree(t *testing.T, root string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		rel, _ := filepath.Rel(root, path)
		files[filepath.ToSlash(rel)] = string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}
