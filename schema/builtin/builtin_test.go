package builtin

import (
	"reflect"
	"testing"

	"github.com/stratadev/strata/schema"
)

func TestForKind(t *testing.T) {
	cases := []struct {
		apiVersion, kind string
		path             []string // fields down to a list
		wantStrategy     schema.Strategy
		wantKeys         []string
	}{
		{"apps/v1", "Deployment", []string{"spec", "template", "spec", "containers"}, schema.Merge, []string{"name"}},
		{"v1", "Pod", []string{"spec", "containers"}, schema.Merge, []string{"name"}},
		{"v1", "Pod", []string{"metadata", "finalizers"}, schema.Merge, nil},
		{"v1", "Pod", []string{"spec", "tolerations"}, 0, nil},
		{"v1", "Service", []string{"spec", "ports"}, schema.Merge, []string{"port"}},
		{"batch/v1", "Job", []string{"spec", "template", "spec", "volumes"}, schema.Merge | schema.RetainKeys, []string{"name"}},
		{"apps/v1", "Deployment", []string{"spec", "strategy"}, schema.RetainKeys, nil},
	}
	for _, c := range cases {
		typ, ok := ForKind(c.apiVersion, c.kind)
		if !ok {
			t.Fatalf("%s %s: not found", c.apiVersion, c.kind)
		}
		var f schema.Field
		for _, name := range c.path {
			if typ == nil {
				t.Fatalf("%s %s: no type at %s", c.apiVersion, c.kind, name)
			}
			f, ok = typ.Field(name)
			if !ok {
				t.Fatalf("%s %s: no field %s", c.apiVersion, c.kind, name)
			}
			typ = f.Type
		}
		if f.Strategy != c.wantStrategy || !reflect.DeepEqual(f.MergeKeys, c.wantKeys) {
			t.Errorf("%s %s %v: strategy %v keys %v, want %v %v", c.apiVersion, c.kind, c.path, f.Strategy, f.MergeKeys, c.wantStrategy, c.wantKeys)
		}
	}
	for _, bad := range [][2]string{{"example.com/v1", "Widget"}, {"v1", ""}, {"a/b/c", "Pod"}} {
		if _, ok := ForKind(bad[0], bad[1]); ok {
			t.Errorf("ForKind(%q, %q) found a type", bad[0], bad[1])
		}
	}
}
