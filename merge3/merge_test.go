package merge3

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

const deployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: %s
  template:
    spec:
      containers:
      - name: web
        image: %s
`

func deploy(replicas, image string) []byte {
	return []byte(strings.NewReplacer("%s", replicas).Replace(strings.Replace(deployment, "image: %s", "image: "+image, 1)))
}

func TestConflictPolicies(t *testing.T) {
	o, u, l := deploy("1", "nginx:1.0"), deploy("2", "nginx:1.1"), deploy("5", "nginx:1.0")
	want := Conflict{File: "app.yaml", Resource: "apps/v1 Deployment web", Path: "spec.replicas", Upstream: "2", Local: "5"}
	for _, c := range []struct {
		policy       ConflictPolicy
		wantReplicas string
		wantErr      bool
	}{
		{"", "replicas: 2", false},
		{TakeUpstream, "replicas: 2", false},
		{KeepLocal, "replicas: 5", false},
		{Fail, "", true},
	} {
		out, report, err := Files("app.yaml", o, u, l, Options{OnConflict: c.policy})
		var ce *ConflictsError
		if c.wantErr {
			if !errors.As(err, &ce) || out != nil {
				t.Errorf("policy %q: got %v and %d bytes, want a ConflictsError and nothing", c.policy, err, len(out))
			}
			continue
		}
		if err != nil {
			t.Fatalf("policy %q: %v", c.policy, err)
		}
		if !strings.Contains(string(out), c.wantReplicas) || !strings.Contains(string(out), "image: nginx:1.1") {
			t.Errorf("policy %q: result\n%s", c.policy, out)
		}
		w := want
		w.Taken = string(TakeUpstream)
		if c.policy == KeepLocal {
			w.Taken = string(KeepLocal)
		}
		if !reflect.DeepEqual(report.Conflicts, []Conflict{w}) {
			t.Errorf("policy %q: conflicts %+v, want %+v", c.policy, report.Conflicts, w)
		}
	}
}

// TestRenameTracking: local renamed a resource kpt annotated; upstream's
// change still reaches it, and nothing is duplicated.
func TestConflictPathNamesListElements(t *testing.T) {
	_, report, err := Files("app.yaml", deploy("1", "nginx:1.0"), deploy("1", "nginx:2.0"), deploy("1", "nginx:mine"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(report.Conflicts) != 1 || report.Conflicts[0].Path != "spec.template.spec.containers[name=web].image" {
		t.Errorf("conflicts: %+v", report.Conflicts)
	}
}

func TestRenameTracking(t *testing.T) {
	o := []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\ndata:\n  a: \"1\"\n")
	u := []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\ndata:\n  a: \"1\"\n  b: \"2\"\n")
	for name, l := range map[string]string{
		"annotation": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: my-cfg\n  annotations:\n    internal.kpt.dev/upstream-identifier: '|ConfigMap|default|cfg'\ndata:\n  a: \"1\"\n",
		"comment":    "apiVersion: v1\nkind: ConfigMap\nmetadata: # kpt-merge: /cfg\n  name: my-cfg\ndata:\n  a: \"1\"\n",
	} {
		out, _, err := Files("cm.yaml", o, u, []byte(l), Options{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		s := string(out)
		if strings.Count(s, "kind: ConfigMap") != 1 || !strings.Contains(s, "name: my-cfg") || !strings.Contains(s, `b: "2"`) {
			t.Errorf("%s: result\n%s", name, s)
		}
	}
}

func TestAnnotate(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "cm.yaml")
	in := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\n  namespace: apps\ndata:\n  a: \"1\"\n"
	if err := os.WriteFile(file, []byte(in), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Annotate(dir, Options{}); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(file)
	want := "apiVersion: v1\nkind: ConfigMap\nmetadata: # kpt-merge: apps/cfg\n  name: cfg\n  namespace: apps\n" +
		"  annotations:\n    internal.kpt.dev/upstream-identifier: '|ConfigMap|apps|cfg'\ndata:\n  a: \"1\"\n"
	if string(got) != want {
		t.Errorf("annotated:\n%s\nwant:\n%s", got, want)
	}
	if err := Annotate(dir, Options{}); err != nil {
		t.Fatal(err)
	}
	if again, _ := os.ReadFile(file); string(again) != want {
		t.Errorf("a second Annotate changed the file:\n%s", again)
	}
}

func TestRejectsBadPackages(t *testing.T) {
	cm := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n"
	for _, c := range []struct {
		name, local, want string
	}{
		{"two resources with one identity", cm + "---\n" + cm, "cm.yaml: v1 ConfigMap a has the same identity as a resource in cm.yaml"},
		{"a key twice in one map", cm + "data:\n  x: 1\n  x: 2\n", "cm.yaml: document 1: data.x: key \"x\" appears twice"},
		{"malformed YAML", "a: [\n", "cm.yaml: invalid YAML: yaml: line 1: did not find expected node content"},
	} {
		_, _, err := Files("cm.yaml", nil, nil, []byte(c.local), Options{})
		if err == nil || err.Error() != "local: "+c.want {
			t.Errorf("%s: error %v, want %q", c.name, err, "local: "+c.want)
		}
	}
}
