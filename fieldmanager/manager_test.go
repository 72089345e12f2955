package fieldmanager

import (
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
)

func TestManagerName(t *testing.T) {
	for _, tc := range []struct{ param, agent, want string }{
		{"alice", "kubectl/v1.37.2 (linux/amd64)", "alice"},
		{"", "kubectl/v1.37.2 (linux/amd64) kubernetes/abc", "kubectl"},
		{"", "kube-controller-manager/v1.37.2 (linux/amd64) kubernetes/abc/system:serviceaccount:kube-system:deployment-controller", "kube-controller-manager"},
		{"", "Go-http-client/2.0", "Go-http-client"},
		{"", "no-slash", "no-slash"},
		{"", "tab\there\x00/1", "tabhere"},
		{"", "", ""},
		{"", strings.Repeat("é", 100) + "/1", strings.Repeat("é", 64)},
	} {
		if got := ManagerName(tc.param, tc.agent); got != tc.want {
			t.Errorf("ManagerName(%q, %q) = %q, want %q", tc.param, tc.agent, got, tc.want)
		}
	}
}

// nopConverter converts unstructured objects between versions by their
// apiVersion alone (the None conversion of custom resources).
type nopConverter struct{ runtime.ObjectConvertor }

func (nopConverter) ConvertToVersion(in runtime.Object, target runtime.GroupVersioner) (runtime.Object, error) {
	u := in.(*unstructured.Unstructured).DeepCopy()
	if gvk, ok := target.KindForGroupVersionKinds([]schema.GroupVersionKind{u.GroupVersionKind()}); ok {
		u.SetGroupVersionKind(gvk)
	}
	return u, nil
}

type noDefaults struct{}

func (noDefaults) Default(runtime.Object) {}

type newUnstructured struct{}

func (newUnstructured) New(gvk schema.GroupVersionKind) (runtime.Object, error) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	return u, nil
}

// newThingManager manages a custom kind without a schema (every list
// atomic, every map granular).
func newThingManager(t testing.TB) *Manager {
	gvk := schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Thing"}
	m, err := New(Config{TypeConverter: managedfields.NewDeducedTypeConverter(), Converter: nopConverter{}, Defaulter: noDefaults{},
		Creater: newUnstructured{}, Kind: gvk, Hub: gvk.GroupVersion(), Custom: true})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestApplyAnswers checks the answers Apply words itself: undecodable
// configurations, duplicate fields under Strict and Warn, and a conflict.
func TestApplyAnswers(t *testing.T) {
	m := newThingManager(t)
	empty, _ := m.Empty()
	cfg := "apiVersion: example.com/v1\nkind: Thing\nmetadata: {name: t}\nspec: {size: 1}\n"
	live, warnings, err := m.Apply(empty, []byte(cfg), ApplyOptions{Manager: "alice"})
	if err != nil || len(warnings) != 0 {
		t.Fatalf("apply: %v %v", warnings, err)
	}
	for _, tc := range []struct {
		name, config string
		opts         ApplyOptions
		code         int32
		message      string
		warning      string
	}{
		{"not YAML", "a: [", ApplyOptions{Manager: "bob"}, 400,
			"error decoding patch: error converting YAML to JSON: yaml: line 1: did not find expected node content", ""},
		{"another kind", "apiVersion: v1\nkind: ConfigMap\n", ApplyOptions{Manager: "bob"}, 400, "invalid object type: /v1, Kind=ConfigMap", ""},
		{"conflict", strings.Replace(cfg, "size: 1", "size: 2", 1), ApplyOptions{Manager: "bob"}, 409,
			`Apply failed with 1 conflict: conflict with "alice": .spec.size`, ""},
		{"duplicate field, Strict", cfg + "spec: {size: 1}\n", ApplyOptions{Manager: "alice", FieldValidation: "Strict"}, 400,
			`error strict decoding patch: error converting YAML to JSON: yaml: unmarshal errors:` + "\n" + `  line 5: key "spec" already set in map`, ""},
		{"duplicate field, Warn", cfg + "spec: {size: 1}\n", ApplyOptions{Manager: "alice", FieldValidation: "Warn"}, 0, "",
			`error converting YAML to JSON: yaml: unmarshal errors:` + "\n" + `  line 5: key "spec" already set in map`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, warnings, err := m.Apply(live.DeepCopyObject(), []byte(tc.config), tc.opts)
			if tc.code == 0 {
				if err != nil || len(warnings) != 1 || warnings[0] != tc.warning {
					t.Fatalf("got %v, warnings %q; want the warning %q", err, warnings, tc.warning)
				}
				return
			}
			var st apierrors.APIStatus
			if !apierrors.IsBadRequest(err) && !apierrors.IsConflict(err) {
				t.Fatalf("got %v, want %d", err, tc.code)
			}
			st = err.(apierrors.APIStatus)
			if st.Status().Code != tc.code || st.Status().Message != tc.message {
				t.Fatalf("got %d %q\nwant %d %q", st.Status().Code, st.Status().Message, tc.code, tc.message)
			}
		})
	}
}

// FuzzApply: no configuration makes Apply panic, and every refusal is an
// API status of 400 or 409 (500 would be strata failing on input).
func FuzzApply(f *testing.F) {
	m := newThingManager(f)
	for _, s := range []string{
		"apiVersion: example.com/v1\nkind: Thing\nmetadata: {name: t}\nspec: {size: 1, list: [a, b]}\n",
		`{"apiVersion":"example.com/v1","kind":"Thing","metadata":{"managedFields":[{"manager":"x"}]}}`,
		"a: [", "null", "[]", "", "apiVersion: 1\nkind: {}\n", "&a [*a]",
	} {
		f.Add([]byte(s), false)
	}
	f.Fuzz(func(t *testing.T, config []byte, force bool) {
		empty, _ := m.Empty()
		_, _, err := m.Apply(empty, config, ApplyOptions{Manager: "fuzz", Force: force, FieldValidation: "Strict"})
		if err == nil {
			return
		}
		st, ok := err.(apierrors.APIStatus)
		if !ok || (st.Status().Code != 400 && st.Status().Code != 409) {
			t.Fatalf("%q: %v", config, err)
		}
	})
}
