package merge3

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
	kyamlfilters "sigs.k8s.io/kustomize/kyaml/kio/filters"
	kyaml3 "sigs.k8s.io/kustomize/kyaml/yaml/merge3"
)

// The benchmarks run strata's merge and kustomize kyaml's merge3 (a test-only
// dependency, the merge kpt is built on) on the same inputs in one run.

// resourceDoc is one Deployment of the generated package; upstream changes
// the image, local the replicas: disjoint fields on every resource.
func resourceDoc(i int, image string, replicas int) string {
	return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: app-%d
  labels:
    app: app-%d
spec:
  replicas: %d
  selector:
    matchLabels:
      app: app-%d
  template:
    metadata:
      labels:
        app: app-%d
    spec:
      containers:
      - name: app
        image: %s
        ports:
        - containerPort: 8080
`, i, i, replicas, i, i, image)
}

// writePackage writes n resources, four per file, each version differing
// as the version function says.
func writePackage(tb testing.TB, dir string, n int, version func(i int) (string, int)) {
	tb.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		tb.Fatal(err)
	}
	for f := 0; f*4 < n; f++ {
		var docs []string
		for i := f * 4; i < n && i < f*4+4; i++ {
			image, replicas := version(i)
			docs = append(docs, resourceDoc(i, image, replicas))
		}
		path := filepath.Join(dir, fmt.Sprintf("app-%03d.yaml", f))
		if err := os.WriteFile(path, []byte(strings.Join(docs, "---\n")), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
}

func makePackages(tb testing.TB, n int) (original, upstream, local string) {
	root := tb.TempDir()
	original, upstream, local = filepath.Join(root, "o"), filepath.Join(root, "u"), filepath.Join(root, "l")
	writePackage(tb, original, n, func(int) (string, int) { return "app:1.0", 1 })
	writePackage(tb, upstream, n, func(int) (string, int) { return "app:2.0", 1 })
	writePackage(tb, local, n, func(i int) (string, int) { return "app:1.0", 2 + i%3 })
	return original, upstream, local
}

func BenchmarkPackageUpdate1000(b *testing.B) {
	o, u, l := makePackages(b, 1000)
	b.Run("strata", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			out := filepath.Join(b.TempDir(), "out")
			if _, err := Dirs(o, u, l, out, Options{}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("kyaml", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			dest := filepath.Join(b.TempDir(), "dest")
			if err := os.CopyFS(dest, os.DirFS(l)); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			if err := (kyamlfilters.Merge3{OriginalPath: o, UpdatedPath: u, DestPath: dest, MatchFilesGlob: []string{"*.yaml"}}).Merge(); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// envDeployment is a Deployment whose container has n env entries; value
// gives each entry's value, extra names entries appended after them.
func envDeployment(n int, value func(i int) string, extra ...string) string {
	var b strings.Builder
	b.WriteString("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  template:\n    spec:\n      containers:\n      - name: web\n        image: web:1\n        env:\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "        - name: E%05d\n          value: %q\n", i, value(i))
	}
	for _, name := range extra {
		fmt.Fprintf(&b, "        - name: %s\n          value: added\n", name)
	}
	return b.String()
}

func envVersions(n int) (o, u, l string) {
	o = envDeployment(n, func(i int) string { return "v0" })
	u = envDeployment(n, func(i int) string {
		if i%10 == 0 {
			return "upstream"
		}
		return "v0"
	}, "UP1", "UP2")
	l = envDeployment(n, func(i int) string {
		if i%10 == 5 {
			return "local"
		}
		return "v0"
	}, "LOCAL1")
	return o, u, l
}

func BenchmarkEnvList(b *testing.B) {
	for _, n := range []int{100, 1000, 10000} {
		o, u, l := envVersions(n)
		b.Run(fmt.Sprintf("n=%d/strata", n), func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if _, _, err := Files("d.yaml", []byte(o), []byte(u), []byte(l), Options{}); err != nil {
					b.Fatal(err)
				}
			}
		})
		if n > 1000 {
			continue // kyaml's list merge is quadratic: minutes and gigabytes here
		}
		b.Run(fmt.Sprintf("n=%d/kyaml", n), func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if _, err := kyaml3.MergeStrings(l, o, u, true); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestBenchInputsAgree checks that strata and kyaml merge the benchmark's env
// list to the same entries and values (kyaml may order them differently).
func TestBenchInputsAgree(t *testing.T) {
	o, u, l := envVersions(200)
	ours, _, err := Files("d.yaml", []byte(o), []byte(u), []byte(l), Options{})
	if err != nil {
		t.Fatal(err)
	}
	theirs, err := kyaml3.MergeStrings(l, o, u, true)
	if err != nil {
		t.Fatal(err)
	}
	a, b := envValues(t, string(ours)), envValues(t, theirs)
	if len(a) != 203 || fmt.Sprint(a) != fmt.Sprint(b) {
		t.Errorf("env differs:\nstrata %v\nkyaml  %v", a, b)
	}
}

func envValues(t *testing.T, doc string) map[string]string {
	t.Helper()
	var d struct {
		Spec struct {
			Template struct {
				Spec struct {
					Containers []struct {
						Env []struct{ Name, Value string }
					}
				}
			}
		}
	}
	if err := yaml.Unmarshal([]byte(doc), &d); err != nil {
		t.Fatal(err)
	}
	m := map[string]string{}
	for _, e := range d.Spec.Template.Spec.Containers[0].Env {
		m[e.Name] = e.Value
	}
	return m
}
