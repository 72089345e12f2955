package builtin_test

import (
	"slices"
	"testing"

	"github.com/stratadev/strata/schema"
	"github.com/stratadev/strata/schema/builtin"
)

func TestForKind(t *testing.T) {
	cases := []struct {
		apiVersion, kind, path string
		strategy               schema.Strategy
		keys                   []string
	}{
		{"apps/v1", "Deployment", "spec.template.spec.containers", schema.Merge, []string{"name"}},
		{"apps/v1", "StatefulSet", "spec.template.spec.volumes", schema.Merge | schema.RetainKeys, []string{"name"}},
		{"v1", "Pod", "spec.containers[].ports", schema.Merge, []string{"containerPort"}},
		{"v1", "Service", "spec.ports", schema.Merge, []string{"port"}},
		{"v1", "ConfigMap", "data", 0, nil},
		{"batch/v1", "Job", "spec.template.spec.initContainers", schema.Merge, []string{"name"}},
		{"batch/v1", "CronJob", "spec.jobTemplate.spec.template.spec.containers[].env", schema.Merge, []string{"name"}},
		{"rbac.authorization.k8s.io/v1", "ClusterRole", "rules", 0, nil},
		{"v1", "Node", "spec.taints", 0, nil},
		{"v1", "Pod", "metadata.finalizers", schema.Merge, nil},
	}
	for _, c := range cases {
		typ, ok := builtin.ForKind(c.apiVersion, c.kind)
		if !ok {
			t.Errorf("%s %s: not found", c.apiVersion, c.kind)
			continue
		}
		f := lookup(t, typ, c.path)
		if f.Strategy != c.strategy || !slices.Equal(f.MergeKeys, c.keys) {
			t.Errorf("%s %s %s: %q %q, want %q %q", c.apiVersion, c.kind, c.path, f.Strategy, f.MergeKeys, c.strategy, c.keys)
		}
	}
}

func TestForKindUnknown(t *testing.T) {
	for _, c := range [][2]string{{"apps/v1", "Nope"}, {"v2", "Pod"}, {"", "Pod"}, {"stable.example.com/v1", "CronTab"}} {
		if _, ok := builtin.ForKind(c[0], c[1]); ok {
			t.Errorf("ForKind(%q, %q) found a type", c[0], c[1])
		}
	}
}

func TestForObjectAndGVK(t *testing.T) {
	if _, ok := builtin.ForObject(map[string]any{"apiVersion": "apps/v1", "kind": "Deployment"}); !ok {
		t.Error("ForObject: no Deployment")
	}
	if _, ok := builtin.ForObject(map[string]any{"kind": "Deployment"}); ok {
		t.Error("ForObject without apiVersion found a type")
	}
	a, _ := builtin.ForGVK("apps", "v1", "Deployment")
	b, _ := builtin.ForKind("apps/v1", "Deployment")
	if a == nil || a.Name() != b.Name() {
		t.Errorf("ForGVK %v and ForKind %v disagree", a, b)
	}
}

// lookup follows a dotted path, "[]" stepping into list elements.
func lookup(t *testing.T, typ schema.Type, path string) schema.Field {
	t.Helper()
	var f schema.Field
	for _, seg := range splitPath(path) {
		if seg == "[]" {
			typ = typ.Elem()
			continue
		}
		var ok bool
		if f, ok = typ.Field(seg); !ok {
			t.Fatalf("%s: no field %q", path, seg)
		}
		typ = f.Type
	}
	return f
}

func splitPath(path string) []string {
	var segs []string
	start := 0
	for i := 0; i <= len(path); i++ {
		if i == len(path) || path[i] == '.' {
			seg := path[start:i]
			for len(seg) > 2 && seg[len(seg)-2:] == "[]" {
				segs = append(segs, seg[:len(seg)-2])
				seg = "[]"
			}
			segs = append(segs, seg)
			start = i + 1
		}
	}
	return segs
}
