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

// TestScenarios merges each directory of testdata/scenarios (original,
// upstream, local) under a policy and compares the result, byte by byte,
// with its expected directory, and the report exactly. Each is a bug a
// review against kpt found; -update rewrites the expected directories.
func TestScenarios(t *testing.T) {
	tests := []struct {
		name, dir, expected string
		policy              ConflictPolicy
		conflicts           []Conflict
		kept                []string
	}{{
		// values.yaml and a kustomization.yaml without apiVersion are not
		// resources: they merge by path, key by key, instead of aborting.
		name: "files that are not resources merge by path", dir: "data-files", expected: "expected",
	}, {
		// local's name, namespace, upstream and upstreamLock stay local's
		// when the blueprint tracks a base of its own; labels and info merge.
		name: "Kptfile identity stays local's", dir: "kptfile-identity", expected: "expected",
	}, {
		// Functions with exec and no image are keyed by exec: local's added
		// ./bin/b survives upstream's change to ./bin/a.
		name: "exec functions keyed by exec", dir: "exec-functions", expected: "expected",
	}, {
		name: "element deleted upstream, changed locally: --on-conflict=upstream deletes it", dir: "deleted-element",
		expected: "expected-upstream", policy: TakeUpstream,
		conflicts: []Conflict{
			{File: "Kptfile", Resource: "kpt.dev/v1 Kptfile app", Path: "pipeline.mutators[name=ns]", Upstream: "<absent>", Local: "{name: ns, image: 'gcr.io/kpt-fn/set-namespace:v0.1', configMap: {namespace: b}}", Taken: "upstream"},
			{File: "deploy.yaml", Resource: "apps/v1 Deployment web", Path: "spec.template.spec.containers[name=sidecar]", Upstream: "<absent>", Local: "{name: sidecar, image: 'envoy:1.1'}", Taken: "upstream"},
		},
	}, {
		name: "element deleted upstream, changed locally: --on-conflict=local keeps it", dir: "deleted-element",
		expected: "expected-local", policy: KeepLocal,
		conflicts: []Conflict{
			{File: "Kptfile", Resource: "kpt.dev/v1 Kptfile app", Path: "pipeline.mutators[name=ns]", Upstream: "<absent>", Local: "{name: ns, image: 'gcr.io/kpt-fn/set-namespace:v0.1', configMap: {namespace: b}}", Taken: "local"},
			{File: "deploy.yaml", Resource: "apps/v1 Deployment web", Path: "spec.template.spec.containers[name=sidecar]", Upstream: "<absent>", Local: "{name: sidecar, image: 'envoy:1.1'}", Taken: "local"},
		},
	}, {
		// A file upstream deleted and local changed is kept and reported,
		// as a resource is; one nobody changed goes.
		name: "text file deleted upstream, changed locally, is kept", dir: "deleted-text", expected: "expected",
		kept: []string{"scripts/setup.sh"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join("testdata", "scenarios", tt.dir)
			out := filepath.Join(t.TempDir(), "out")
			report, err := Dirs(filepath.Join(dir, "original"), filepath.Join(dir, "upstream"), filepath.Join(dir, "local"), out, Options{OnConflict: tt.policy})
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(report.Conflicts, tt.conflicts) {
				t.Errorf("conflicts:\n%#v\nwant:\n%#v", report.Conflicts, tt.conflicts)
			}
			if !reflect.DeepEqual(report.KeptDeleted, tt.kept) {
				t.Errorf("kept deleted: %q, want %q", report.KeptDeleted, tt.kept)
			}
			expected := filepath.Join(dir, tt.expected)
			if *update {
				os.RemoveAll(expected)
				if err := os.CopyFS(expected, os.DirFS(out)); err != nil {
					t.Fatal(err)
				}
			}
			compareTrees(t, out, expected)
		})
	}
}

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
