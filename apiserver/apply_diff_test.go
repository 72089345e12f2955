package apiserver

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"testing"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/conversion"
	schemaobjectmeta "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/objectmeta"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/client-go/applyconfigurations"
	"k8s.io/kubernetes/pkg/registry/apps/deployment"
	"k8s.io/kubernetes/pkg/registry/core/service"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"sigs.k8s.io/yaml"

	"github.com/stratadev/strata/fieldmanager"
	"github.com/stratadev/strata/registry"
	"github.com/stratadev/strata/storage"
)

// A differential test: random histories of applies (some forced) and merge
// patches by three managers, sent to strata over HTTP and given to the
// upstream field manager directly (structured-merge-diff, with client-go's
// own schema of the built-in types as its type converter, and
// apiextensions-apiserver's for the custom kind). After every write the
// answers agree (both accept, or both refuse with the same conflict), and
// at the end strata's object and managedFields equal the reference's,
// read from the server that wrote them and from a new server on the same
// storage (a restart).

// diffKind is one kind the histories write: where it lives, and how to
// make a random applied configuration or merge patch of it.
type diffKind struct {
	path, name string
	gvk        schema.GroupVersionKind
	apply      func(r *rand.Rand) map[string]any
	patch      func(r *rand.Rand) map[string]any
	// compare lists the fields compared besides managedFields.
	compare [][]string
}

func pick[T any](r *rand.Rand, xs []T) []T {
	var out []T
	for _, x := range xs {
		if r.IntN(2) == 0 {
			out = append(out, x)
		}
	}
	return out
}

func someLabels(r *rand.Rand) map[string]any {
	out := map[string]any{}
	for _, k := range pick(r, []string{"a", "b", "c"}) {
		out[k] = fmt.Sprint(r.IntN(2))
	}
	return out
}

var diffKinds = []diffKind{{
	path: "/apis/apps/v1/namespaces/default/deployments", name: "d",
	gvk: schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"},
	apply: func(r *rand.Rand) map[string]any {
		spec := map[string]any{"selector": map[string]any{"matchLabels": map[string]any{"app": "d"}}}
		if r.IntN(2) == 0 {
			spec["replicas"] = r.IntN(3) + 1
		}
		container := map[string]any{"name": "app", "image": fmt.Sprintf("nginx:1.%d", r.IntN(2))}
		var env []any
		for _, name := range pick(r, []string{"A", "B", "C"}) {
			env = append(env, map[string]any{"name": name, "value": fmt.Sprint(r.IntN(2))})
		}
		if env != nil {
			container["env"] = env
		}
		spec["template"] = map[string]any{"metadata": map[string]any{"labels": map[string]any{"app": "d"}},
			"spec": map[string]any{"containers": []any{container}}}
		return map[string]any{"metadata": map[string]any{"labels": someLabels(r)}, "spec": spec}
	},
	patch: func(r *rand.Rand) map[string]any {
		if r.IntN(2) == 0 {
			return map[string]any{"spec": map[string]any{"replicas": r.IntN(3) + 1, "minReadySeconds": r.IntN(3)}}
		}
		return map[string]any{"metadata": map[string]any{"labels": someLabels(r)}}
	},
	compare: [][]string{{"metadata", "labels"}, {"spec"}},
}, {
	path: "/api/v1/namespaces/default/services", name: "s",
	gvk: schema.GroupVersionKind{Version: "v1", Kind: "Service"},
	apply: func(r *rand.Rand) map[string]any {
		ports := []any{}
		for _, p := range pick(r, []map[string]any{{"port": 80, "protocol": "TCP"}, {"port": 53, "protocol": "UDP"}, {"port": 53, "protocol": "TCP"}}) {
			ports = append(ports, map[string]any{"port": p["port"], "protocol": p["protocol"], "name": fmt.Sprintf("p%d-%s-%d", p["port"], strings.ToLower(p["protocol"].(string)), r.IntN(2))})
		}
		if len(ports) == 0 {
			ports = append(ports, map[string]any{"port": 8080, "protocol": "TCP", "name": "alt"})
		}
		return map[string]any{"metadata": map[string]any{"labels": someLabels(r)},
			"spec": map[string]any{"ports": ports, "selector": someLabels(r)}}
	},
	patch: func(r *rand.Rand) map[string]any {
		return map[string]any{"metadata": map[string]any{"labels": someLabels(r)}}
	},
	compare: [][]string{{"metadata", "labels"}, {"spec", "ports"}, {"spec", "selector"}},
}, {
	path: "/apis/example.com/v1/namespaces/default/widgets", name: "w",
	gvk: schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"},
	apply: func(r *rand.Rand) map[string]any {
		spec := map[string]any{"size": r.IntN(3) + 1}
		var ports []any
		for _, p := range pick(r, []map[string]any{{"port": 53, "protocol": "TCP"}, {"port": 53, "protocol": "UDP"}, {"port": 80, "protocol": "TCP"}}) {
			ports = append(ports, map[string]any{"port": p["port"], "protocol": p["protocol"], "name": fmt.Sprint("n", r.IntN(2))})
		}
		if ports != nil {
			spec["ports"] = ports
		}
		if r.IntN(2) == 0 {
			spec["color"] = []string{"red", "green"}[r.IntN(2)]
		}
		return map[string]any{"metadata": map[string]any{"labels": someLabels(r)}, "spec": spec}
	},
	patch: func(r *rand.Rand) map[string]any {
		return map[string]any{"spec": map[string]any{"size": r.IntN(3) + 1}}
	},
	compare: [][]string{{"metadata", "labels"}, {"spec", "size"}, {"spec", "ports"}},
}}

const (
	diffSeeds = 12
	diffSteps = 10
)

func TestApplyDifferential(t *testing.T) {
	var prefix string
	ts := newTestServer(t, func(c *Config) {
		orig := c.Storage
		c.Storage = func(sc *storage.Config) { orig(sc); prefix = sc.Prefix }
	})
	crd := createWidgetsCRD(t, ts)
	refs := referenceManagers(t, crd)
	type final struct {
		kind diffKind
		name string
		want *unstructured.Unstructured
	}
	var finals []final
	cases := 0
	for _, kind := range diffKinds {
		for seed := range diffSeeds {
			r := rand.New(rand.NewPCG(uint64(seed), 7))
			name := fmt.Sprintf("%s%d", kind.name, seed)
			ref := refs[kind.gvk]
			var live runtime.Object
			for range diffSteps {
				manager := []string{"m1", "m2", "m3"}[r.IntN(3)]
				if live == nil || r.IntN(3) > 0 {
					config := kind.apply(r)
					config["apiVersion"], config["kind"] = kind.gvk.GroupVersion().String(), kind.gvk.Kind
					config["metadata"].(map[string]any)["name"] = name
					force := r.IntN(4) == 0
					live = diffApply(t, ts, ref, kind, name, live, config, manager, force)
				} else {
					live = diffPatch(t, ts, ref, kind, name, live, kind.patch(r), manager)
				}
				cases++
			}
			want, err := runtime.DefaultUnstructuredConverter.ToUnstructured(live)
			if err != nil {
				t.Fatal(err)
			}
			finals = append(finals, final{kind, name, &unstructured.Unstructured{Object: want}})
		}
	}
	restarted := newTestServer(t, func(c *Config) {
		orig := c.Storage
		c.Storage = func(sc *storage.Config) { orig(sc); sc.Prefix = prefix }
	})
	for _, srv := range []*testServer{ts, restarted} {
		for _, f := range finals {
			got := srv.getJSON(t, f.kind.path+"/"+f.name)
			compareWithReference(t, f.kind, f.name, got, f.want.Object)
		}
	}
	t.Logf("%d writes in %d histories agree with the upstream field manager, before and after a restart", cases, len(finals))
}

// referenceManagers are the upstream field managers of the three kinds,
// built as kube-apiserver's installer and apiextensions-apiserver build
// them: the built-in kinds with client-go's schema of the built-in types
// (an independent source of the type models) and the strategies' reset
// fields; the custom kind with the CRD's schemas.
func referenceManagers(t *testing.T, crdObj *unstructured.Unstructured) map[schema.GroupVersionKind]*managedfields.FieldManager {
	t.Helper()
	builtin := applyconfigurations.NewTypeConverter(registry.Scheme)
	resets := map[string]map[fieldpath.APIVersion]*fieldpath.Set{
		"Deployment": deployment.Strategy.GetResetFields(), "Service": service.Strategy.GetResetFields(),
	}
	out := map[schema.GroupVersionKind]*managedfields.FieldManager{}
	for _, kind := range diffKinds[:2] {
		fm, err := managedfields.NewDefaultFieldManager(builtin, registry.Scheme, registry.Scheme, registry.Scheme, kind.gvk,
			schema.GroupVersion{Group: kind.gvk.Group, Version: runtime.APIVersionInternal}, "",
			fieldpath.NewExcludeFilterSetMap(resets[kind.gvk.Kind]))
		if err != nil {
			t.Fatal(err)
		}
		out[kind.gvk] = fm
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(crdObj.Object, crd); err != nil {
		t.Fatal(err)
	}
	static, err := fieldmanager.BuiltinModels(registry.OpenAPIDefinitions, registry.Scheme)
	if err != nil {
		t.Fatal(err)
	}
	tc, err := fieldmanager.CRDTypeConverter(crd, static)
	if err != nil {
		t.Fatal(err)
	}
	factory, err := conversion.NewCRConverterFactory(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	converter, _, err := factory.NewConverter(crd)
	if err != nil {
		t.Fatal(err)
	}
	gvk := diffKinds[2].gvk
	fm, err := managedfields.NewDefaultCRDFieldManager(tc, converter, noDefaults{}, unstructuredNew{}, gvk, gvk.GroupVersion(), "",
		fieldpath.NewExcludeFilterSetMap(map[fieldpath.APIVersion]*fieldpath.Set{
			"example.com/v1": fieldpath.NewSet(fieldpath.MakePathOrDie("status"))}))
	if err != nil {
		t.Fatal(err)
	}
	out[gvk] = fm
	return out
}

// noDefaults: the custom kind's defaults (color) are left out of the
// comparison.
type noDefaults struct{}

func (noDefaults) Default(runtime.Object) {}

type unstructuredNew struct{}

func (unstructuredNew) New(gvk schema.GroupVersionKind) (runtime.Object, error) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	return u, nil
}

func diffApply(t *testing.T, ts *testServer, ref *managedfields.FieldManager, kind diffKind, name string,
	live runtime.Object, config map[string]any, manager string, force bool) runtime.Object {
	t.Helper()
	body, _ := json.Marshal(config)
	query := "?fieldManager=" + manager
	if force {
		query += "&force=true"
	}
	code, answer := ts.send(t, http.MethodPatch, kind.path+"/"+name+query, "application/apply-patch+yaml", body)
	if live == nil {
		if live, _ = registry.Scheme.New(kind.gvk); live == nil {
			live, _ = unstructuredNew{}.New(kind.gvk)
		}
	}
	// The configuration as kube-apiserver reads it (sigs.k8s.io/yaml: JSON
	// numbers as float64).
	applied := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(body, &applied.Object); err != nil {
		t.Fatal(err)
	}
	next, err := ref.Apply(live.DeepCopyObject(), applied, manager, force)
	if err != nil {
		if !apierrors.IsConflict(err) || code != http.StatusConflict || jsonField(answer, "message") != err.Error() {
			refLive, _ := runtime.DefaultUnstructuredConverter.ToUnstructured(live)
			t.Fatalf("apply by %s of %s: strata answered %d %s; the reference: %v\nreference managedFields: %s\nstrata's: %s", manager, body, code, answer, err,
				jsonString(managedWithoutTime(refLive)), jsonString(managedWithoutTime(ts.getJSON(t, kind.path+"/"+name))))
		}
		return live
	}
	if code >= 300 {
		t.Fatalf("apply by %s of %s: strata answered %d %s; the reference accepted it", manager, body, code, answer)
	}
	if u, ok := next.(*unstructured.Unstructured); ok {
		return coerceMetadata(t, u)
	}
	// The field manager answers in the hub (internal) version.
	served, err := registry.Scheme.ConvertToVersion(next, kind.gvk.GroupVersion())
	if err != nil {
		t.Fatal(err)
	}
	return served
}

func diffPatch(t *testing.T, ts *testServer, ref *managedfields.FieldManager, kind diffKind, name string,
	live runtime.Object, patch map[string]any, manager string) runtime.Object {
	t.Helper()
	body, _ := json.Marshal(patch)
	code, answer := ts.send(t, http.MethodPatch, kind.path+"/"+name+"?fieldManager="+manager, "application/merge-patch+json", body)
	if code != http.StatusOK {
		t.Fatalf("merge patch by %s of %s: %d %s", manager, body, code, answer)
	}
	current, _ := json.Marshal(live)
	patched, err := jsonpatch.MergePatch(current, body)
	if err != nil {
		t.Fatal(err)
	}
	next := live.DeepCopyObject()
	if u, ok := next.(*unstructured.Unstructured); ok {
		u.Object = nil
		err = json.Unmarshal(patched, &u.Object)
	} else {
		err = json.Unmarshal(patched, next)
		registry.Scheme.Default(next)
	}
	if err != nil {
		t.Fatal(err)
	}
	next = ref.UpdateNoErrors(live, next, manager)
	if u, ok := next.(*unstructured.Unstructured); ok {
		return coerceMetadata(t, u)
	}
	return next
}

// coerceMetadata is what apiextensions-apiserver's storage codec does to a
// custom resource's metadata on every write (schemaobjectmeta.Coerce): it
// goes through metav1.ObjectMeta, so an empty labels map is dropped.
func coerceMetadata(t *testing.T, u *unstructured.Unstructured) *unstructured.Unstructured {
	t.Helper()
	meta, _, err := schemaobjectmeta.GetObjectMeta(u.Object, true)
	if err == nil {
		err = schemaobjectmeta.SetObjectMeta(u.Object, meta)
	}
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func compareWithReference(t *testing.T, kind diffKind, name string, got, want map[string]any) {
	t.Helper()
	for _, path := range kind.compare {
		g, _, _ := unstructured.NestedFieldNoCopy(got, path...)
		w, _, _ := unstructured.NestedFieldNoCopy(want, path...)
		if diff := cmp.Diff(normalizeJSON(w), normalizeJSON(g)); diff != "" {
			t.Errorf("%s %s: .%s (-reference +strata):\n%s", kind.gvk.Kind, name, strings.Join(path, "."), diff)
		}
	}
	if diff := cmp.Diff(managedWithoutTime(want), managedWithoutTime(got)); diff != "" {
		t.Errorf("%s %s: managedFields (-reference +strata):\n%s", kind.gvk.Kind, name, diff)
	}
}

func normalizeJSON(v any) any {
	data, _ := json.Marshal(v)
	var out any
	_ = json.Unmarshal(data, &out)
	return out
}

// managedWithoutTime is an object's managedFields without their times,
// in the order kube-apiserver sorts the entries of one second.
func managedWithoutTime(obj map[string]any) []any {
	entries, _ := normalizeJSON(obj["metadata"].(map[string]any)["managedFields"]).([]any)
	for _, e := range entries {
		delete(e.(map[string]any), "time")
	}
	key := func(e any) string {
		m := e.(map[string]any)
		return fmt.Sprint(m["operation"], "/", m["manager"], "/", m["subresource"])
	}
	slices.SortStableFunc(entries, func(a, b any) int { return strings.Compare(key(a), key(b)) })
	return entries
}
