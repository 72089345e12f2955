package apiserver

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"
)

var (
	gvrCRDs        = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	gvrWidgets     = schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}
	gvrWidgetsBeta = schema.GroupVersionResource{Group: "example.com", Version: "v1beta1", Resource: "widgets"}
)

// createWidgetsCRD creates testdata/widgets-crd.yaml and waits until it is
// Established and its resources answer.
func createWidgetsCRD(t testing.TB, ts *testServer) *unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile("testdata/widgets-crd.yaml")
	if err != nil {
		t.Fatal(err)
	}
	crd := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(data, &crd.Object); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := ts.dynamic.Resource(gvrCRDs).Create(ctx, crd, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating the CRD: %v", err)
	}
	var established *unstructured.Unstructured
	eventually(t, 5*time.Second, func() string {
		got, err := ts.dynamic.Resource(gvrCRDs).Get(ctx, crd.GetName(), metav1.GetOptions{})
		if err != nil {
			return err.Error()
		}
		conds, _, _ := unstructured.NestedSlice(got.Object, "status", "conditions")
		for _, c := range conds {
			if m, _ := c.(map[string]any); m["type"] == "Established" && m["status"] == "True" {
				established = got
				return ""
			}
		}
		return "the CRD is not Established: " + jsonString(got.Object["status"])
	})
	if _, err := ts.dynamic.Resource(gvrWidgets).Namespace("default").List(ctx, metav1.ListOptions{}); err != nil {
		t.Fatalf("listing widgets once the CRD is Established: %v", err)
	}
	return established
}

func jsonString(v any) string {
	data, _ := json.Marshal(v)
	return string(data)
}

func widget(name string, spec map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "example.com/v1", "kind": "Widget",
		"metadata": map[string]any{"name": name}, "spec": spec,
	}}
}

func widgets(ts *testServer) dynamic.ResourceInterface {
	return ts.dynamic.Resource(gvrWidgets).Namespace("default")
}

// TestCRDEstablished: the CRD's status, discovery and the served versions.
func TestCRDEstablished(t *testing.T) {
	ts := newTestServer(t)
	crd := createWidgetsCRD(t, ts)
	accepted, _, _ := unstructured.NestedMap(crd.Object, "status", "acceptedNames")
	want := map[string]any{"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList",
		"shortNames": []any{"wd"}, "categories": []any{"all"}}
	if diff := cmp.Diff(want, accepted); diff != "" {
		t.Errorf("acceptedNames (-want +got):\n%s", diff)
	}
	stored, _, _ := unstructured.NestedStringSlice(crd.Object, "status", "storedVersions")
	if !slices.Equal(stored, []string{"v1"}) {
		t.Errorf("storedVersions = %v, want [v1]", stored)
	}

	resources, err := ts.client.Discovery().ServerResourcesForGroupVersion("example.com/v1")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range resources.APIResources {
		names = append(names, r.Name)
		if r.Name == "widgets" && (!slices.Equal(r.ShortNames, []string{"wd"}) || !r.Namespaced || r.Kind != "Widget") {
			t.Errorf("discovery of widgets = %+v", r)
		}
	}
	if !slices.Equal(names, []string{"widgets", "widgets/status", "widgets/scale"}) {
		t.Errorf("example.com/v1 resources = %v, want [widgets widgets/status widgets/scale]", names)
	}
	group, err := ts.client.Discovery().ServerGroups()
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range group.Groups {
		if g.Name == "example.com" {
			if g.PreferredVersion.Version != "v1" || len(g.Versions) != 2 {
				t.Errorf("example.com group = %+v, want v1 preferred of two versions", g)
			}
		}
	}

	// An object written through v1 reads back through v1beta1 with its
	// apiVersion changed (conversion None), and the reverse.
	ctx := context.Background()
	if _, err := widgets(ts).Create(ctx, widget("a", map[string]any{"size": int64(2)}), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	beta, err := ts.dynamic.Resource(gvrWidgetsBeta).Namespace("default").Get(ctx, "a", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if beta.GetAPIVersion() != "example.com/v1beta1" {
		t.Errorf("apiVersion through v1beta1 = %q", beta.GetAPIVersion())
	}
	b := widget("b", map[string]any{"size": int64(3)})
	b.SetAPIVersion("example.com/v1beta1")
	if _, err := ts.dynamic.Resource(gvrWidgetsBeta).Namespace("default").Create(ctx, b, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	list, err := widgets(ts).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, item := range list.Items {
		if item.GetAPIVersion() != "example.com/v1" {
			t.Errorf("%s through v1 has apiVersion %q", item.GetName(), item.GetAPIVersion())
		}
	}
	if list.GetAPIVersion() != "example.com/v1" || list.GetKind() != "WidgetList" || len(list.Items) != 2 {
		t.Errorf("list: %s %s with %d items", list.GetAPIVersion(), list.GetKind(), len(list.Items))
	}
}

// TestCRDCustomResourceCRUD: create with defaults, get, update with
// generation, watch, delete, through the dynamic client.
func TestCRDCustomResourceCRUD(t *testing.T) {
	ts := newTestServer(t)
	createWidgetsCRD(t, ts)
	ctx := context.Background()
	w, err := widgets(ts).Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	created, err := widgets(ts).Create(ctx, widget("w", map[string]any{"size": int64(3), "port": "http"}), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if color, _, _ := unstructured.NestedString(created.Object, "spec", "color"); color != "red" {
		t.Errorf("spec.color = %q, want the schema's default red", color)
	}
	if created.GetGeneration() != 1 || created.GetUID() == "" || created.GetResourceVersion() == "" {
		t.Errorf("metadata: generation %d uid %q resourceVersion %q", created.GetGeneration(), created.GetUID(), created.GetResourceVersion())
	}
	if ev := nextEvent(t, w, 5*time.Second); ev.Type != watch.Added {
		t.Errorf("first event %s, want ADDED", ev.Type)
	}

	created.Object["spec"].(map[string]any)["size"] = int64(4)
	updated, err := widgets(ts).Update(ctx, created, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if updated.GetGeneration() != 2 {
		t.Errorf("generation after a spec change = %d, want 2", updated.GetGeneration())
	}
	if _, err := widgets(ts).Update(ctx, created, metav1.UpdateOptions{}); !apierrors.IsConflict(err) {
		t.Errorf("update with a stale resourceVersion: %v, want 409 Conflict", err)
	}
	if ev := nextEvent(t, w, 5*time.Second); ev.Type != watch.Modified {
		t.Errorf("second event %s, want MODIFIED", ev.Type)
	}

	// The status subresource: status is ignored on the main resource and
	// spec on /status; status changes leave the generation alone.
	withStatus := updated.DeepCopy()
	withStatus.Object["status"] = map[string]any{"phase": "Ready", "replicas": int64(4)}
	main, err := widgets(ts).Update(ctx, withStatus, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, found := main.Object["status"]; found {
		t.Errorf("status written through the main resource: %v", main.Object["status"])
	}
	withStatus.SetResourceVersion(main.GetResourceVersion())
	withStatus.Object["spec"].(map[string]any)["size"] = int64(9)
	st, err := widgets(ts).UpdateStatus(ctx, withStatus, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if phase, _, _ := unstructured.NestedString(st.Object, "status", "phase"); phase != "Ready" {
		t.Errorf("status.phase = %q after UpdateStatus", phase)
	}
	if size, _, _ := unstructured.NestedInt64(st.Object, "spec", "size"); size != 4 || st.GetGeneration() != 2 {
		t.Errorf("after UpdateStatus: spec.size %d generation %d, want 4 and 2", size, st.GetGeneration())
	}

	if err := widgets(ts).Delete(ctx, "w", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := widgets(ts).Get(ctx, "w", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("get after delete: %v, want 404", err)
	}
}

// TestCRDSchemaValidation: objects the schema refuses are 422 Invalid with
// kube-apiserver's messages, and nothing is stored.
func TestCRDSchemaValidation(t *testing.T) {
	ts := newTestServer(t)
	createWidgetsCRD(t, ts)
	tests := []struct {
		name    string
		spec    map[string]any
		message string
	}{
		{"below minimum", map[string]any{"size": int64(0)},
			`Widget.example.com "bad" is invalid: spec.size: Invalid value: 0: spec.size in body should be greater than or equal to 1`},
		{"above maximum", map[string]any{"size": int64(11)},
			`Widget.example.com "bad" is invalid: spec.size: Invalid value: 11: spec.size in body should be less than or equal to 10`},
		{"not in enum", map[string]any{"size": int64(1), "color": "pink"},
			`Widget.example.com "bad" is invalid: spec.color: Unsupported value: "pink": supported values: "red", "green", "blue"`},
		{"pattern", map[string]any{"size": int64(1), "owner": "Bob"},
			`Widget.example.com "bad" is invalid: spec.owner: Invalid value: "Bob": spec.owner in body should match '^[a-z]+$'`},
		{"required", map[string]any{"color": "red"},
			`Widget.example.com "bad" is invalid: spec.size: Required value`},
		{"wrong type", map[string]any{"size": "big"},
			// The second error is the scale subresource's (specReplicasPath
			// .spec.size), as kube-apiserver's strategy reports it.
			`Widget.example.com "bad" is invalid: [spec.size: Invalid value: "string": spec.size in body must be of type integer: "string", .spec.size: Invalid value: 0: .spec.size accessor error: big is of the type string, expected int64]`},
		{"embedded resource without kind", map[string]any{"size": int64(1), "template": map[string]any{"apiVersion": "v1"}},
			`Widget.example.com "bad" is invalid: spec.template.kind: Required value`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := widgets(ts).Create(context.Background(), widget("bad", tt.spec), metav1.CreateOptions{})
			checkStatusErr(t, err, statusWant{code: http.StatusUnprocessableEntity, reason: metav1.StatusReasonInvalid, message: tt.message})
		})
	}
	if _, err := widgets(ts).Get(context.Background(), "bad", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("a refused object was stored: %v", err)
	}
}

// TestCRDPruning: unknown fields are dropped with a warning, refused under
// fieldValidation=Strict; preserved subtrees keep them.
func TestCRDPruning(t *testing.T) {
	ts := newTestServer(t)
	createWidgetsCRD(t, ts)
	body := `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"p","bogus":1},` +
		`"spec":{"size":1,"unknown":"x","extra":{"anything":{"goes":true}}},"top":2}`
	path := "/apis/example.com/v1/namespaces/default/widgets"
	strict := rawCall(t, ts, "POST", path+"?fieldValidation=Strict", map[string]string{"Content-Type": "application/json"}, []byte(body))
	checkStatus(t, parseStatusBody(t, strict.body), statusWant{code: http.StatusBadRequest, reason: metav1.StatusReasonBadRequest,
		message: `Widget in version "v1" cannot be handled as a Widget: strict decoding error: unknown field "metadata.bogus", unknown field "spec.unknown", unknown field "top"`})

	res := rawCall(t, ts, "POST", path, map[string]string{"Content-Type": "application/json"}, []byte(body))
	if res.code != http.StatusCreated {
		t.Fatalf("create: %d %s", res.code, res.body)
	}
	wantWarnings := []string{`299 - "unknown field \"metadata.bogus\""`, `299 - "unknown field \"spec.unknown\""`, `299 - "unknown field \"top\""`}
	if got := res.header.Values("Warning"); !slices.Equal(got, wantWarnings) {
		t.Errorf("Warning headers:\n got %q\nwant %q", got, wantWarnings)
	}
	got, err := widgets(ts).Get(context.Background(), "p", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"size": int64(1), "color": "red", "extra": map[string]any{"anything": map[string]any{"goes": true}}}
	if diff := cmp.Diff(want, got.Object["spec"]); diff != "" {
		t.Errorf("stored spec (-want +got):\n%s", diff)
	}
	if _, found := got.Object["top"]; found {
		t.Error("the unknown top-level field was stored")
	}
}

// TestCRDPatch: merge, JSON and strategic merge patches of a custom
// resource; the strategic one merges lists by the schema's list types.
func TestCRDPatch(t *testing.T) {
	ts := newTestServer(t)
	createWidgetsCRD(t, ts)
	ctx := context.Background()
	_, err := widgets(ts).Create(ctx, widget("p", map[string]any{
		"size":       int64(1),
		"ports":      []any{map[string]any{"port": int64(80), "protocol": "TCP", "name": "http"}, map[string]any{"port": int64(80), "protocol": "UDP"}},
		"tags":       []any{"a", "b"},
		"containers": []any{map[string]any{"name": "app", "image": "app:1"}, map[string]any{"name": "side", "image": "side:1"}},
		"args":       []any{"x", "y"},
	}), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	strategic := `{"spec":{` +
		`"ports":[{"port":80,"protocol":"UDP","name":"dns"},{"port":443,"protocol":"TCP"}],` +
		`"tags":["c","a"],` +
		`"containers":[{"name":"side","image":"side:2"}],` +
		`"args":["z"]}}`
	out, err := widgets(ts).Patch(ctx, "p", types.StrategicMergePatchType, []byte(strategic), metav1.PatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	spec := out.Object["spec"].(map[string]any)
	wantPorts := []any{
		map[string]any{"port": int64(80), "protocol": "TCP", "name": "http"},
		map[string]any{"port": int64(80), "protocol": "UDP", "name": "dns"},
		map[string]any{"port": int64(443), "protocol": "TCP"},
	}
	if diff := cmp.Diff(wantPorts, spec["ports"]); diff != "" {
		t.Errorf("ports merged by the key (port, protocol) (-want +got):\n%s", diff)
	}
	// Patch items first in the patch's order, then the others (as
	// apimachinery orders merged lists).
	if diff := cmp.Diff([]any{"c", "a", "b"}, spec["tags"]); diff != "" {
		t.Errorf("set tags (-want +got):\n%s", diff)
	}
	wantContainers := []any{map[string]any{"name": "app", "image": "app:1"}, map[string]any{"name": "side", "image": "side:2"}}
	if diff := cmp.Diff(wantContainers, spec["containers"]); diff != "" {
		t.Errorf("containers merged by name (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]any{"z"}, spec["args"]); diff != "" {
		t.Errorf("args, a list without merge information, replaced (-want +got):\n%s", diff)
	}

	out, err = widgets(ts).Patch(ctx, "p", types.MergePatchType, []byte(`{"spec":{"size":5,"tags":null}}`), metav1.PatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if size, _, _ := unstructured.NestedInt64(out.Object, "spec", "size"); size != 5 {
		t.Errorf("merge patch: size %d", size)
	}
	out, err = widgets(ts).Patch(ctx, "p", types.JSONPatchType, []byte(`[{"op":"replace","path":"/spec/size","value":6}]`), metav1.PatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if size, _, _ := unstructured.NestedInt64(out.Object, "spec", "size"); size != 6 {
		t.Errorf("json patch: size %d", size)
	}
	_, err = widgets(ts).Patch(ctx, "p", types.MergePatchType, []byte(`{"spec":{"size":50}}`), metav1.PatchOptions{})
	checkStatusErr(t, err, statusWant{code: http.StatusUnprocessableEntity, reason: metav1.StatusReasonInvalid,
		message: `Widget.example.com "p" is invalid: spec.size: Invalid value: 50: spec.size in body should be less than or equal to 10`})
}

// TestCRDTable: kubectl's table has the CRD's printer columns.
func TestCRDTable(t *testing.T) {
	ts := newTestServer(t)
	createWidgetsCRD(t, ts)
	if _, err := widgets(ts).Create(context.Background(), widget("t", map[string]any{"size": int64(7), "color": "blue"}), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	res := rawCall(t, ts, "GET", "/apis/example.com/v1/namespaces/default/widgets",
		map[string]string{"Accept": "application/json;as=Table;g=meta.k8s.io;v=v1"}, nil)
	if res.code != http.StatusOK {
		t.Fatalf("%d %s", res.code, res.body)
	}
	var table metav1.Table
	if err := json.Unmarshal(res.body, &table); err != nil {
		t.Fatal(err)
	}
	var columns []string
	for _, c := range table.ColumnDefinitions {
		columns = append(columns, c.Name)
	}
	if !slices.Equal(columns, []string{"Name", "Size", "Color", "Age"}) {
		t.Errorf("columns = %v", columns)
	}
	if len(table.Rows) != 1 || len(table.Rows[0].Cells) != 4 || table.Rows[0].Cells[0] != "t" ||
		table.Rows[0].Cells[1] != float64(7) || table.Rows[0].Cells[2] != "blue" {
		t.Errorf("rows = %+v", table.Rows)
	}
}

// TestCRDOpenAPI: the CRD's schema joins /openapi/v3 with its extensions.
func TestCRDOpenAPI(t *testing.T) {
	ts := newTestServer(t)
	createWidgetsCRD(t, ts)
	res := rawCall(t, ts, "GET", "/openapi/v3/apis/example.com/v1", nil, nil)
	if res.code != http.StatusOK {
		t.Fatalf("%d %s", res.code, res.body)
	}
	var doc struct {
		Components struct {
			Schemas map[string]map[string]any `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(res.body, &doc); err != nil {
		t.Fatal(err)
	}
	w, ok := doc.Components.Schemas["com.example.v1.Widget"]
	if !ok {
		t.Fatalf("no com.example.v1.Widget in the document; schemas: %v", keys(doc.Components.Schemas))
	}
	ports := dig(w, "properties", "spec", "properties", "ports")
	if ports["x-kubernetes-list-type"] != "map" || jsonString(ports["x-kubernetes-list-map-keys"]) != `["port","protocol"]` {
		t.Errorf("spec.ports = %s", jsonString(ports))
	}
	containers := dig(w, "properties", "spec", "properties", "containers")
	if containers["x-kubernetes-patch-merge-key"] != "name" {
		t.Errorf("spec.containers = %s", jsonString(containers))
	}
	v2 := rawCall(t, ts, "GET", "/openapi/v2", map[string]string{"Accept": "application/json"}, nil)
	if !strings.Contains(string(v2.body), `"com.example.v1.Widget"`) {
		t.Error("/openapi/v2 has no com.example.v1.Widget")
	}
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func dig(m map[string]any, path ...string) map[string]any {
	for _, p := range path {
		next, _ := m[p].(map[string]any)
		m = next
	}
	return m
}

// TestCRDDeletion: deleting the CRD deletes its custom resources and stops
// serving them.
func TestCRDDeletion(t *testing.T) {
	ts := newTestServer(t)
	createWidgetsCRD(t, ts)
	ctx := context.Background()
	for _, name := range []string{"a", "b"} {
		if _, err := widgets(ts).Create(ctx, widget(name, map[string]any{"size": int64(1)}), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := ts.dynamic.Resource(gvrCRDs).Delete(ctx, "widgets.example.com", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, func() string {
		_, err := ts.dynamic.Resource(gvrCRDs).Get(ctx, "widgets.example.com", metav1.GetOptions{})
		if !apierrors.IsNotFound(err) {
			return "the CRD is still there: " + errString(err)
		}
		return ""
	})
	if _, err := widgets(ts).List(ctx, metav1.ListOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("list of widgets after the CRD went: %v, want 404", err)
	}
	// Created again, the CRD serves no leftover objects.
	createWidgetsCRD(t, ts)
	list, err := widgets(ts).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 0 {
		t.Errorf("%d widgets outlived their CRD", len(list.Items))
	}
}

func errString(err error) string {
	if err == nil {
		return "no error"
	}
	return err.Error()
}

// TestCRDScale: the scale subresource reads and writes spec.size through
// an autoscaling/v1 Scale; a write is validated as an update of the object.
func TestCRDScale(t *testing.T) {
	ts := newTestServer(t)
	createWidgetsCRD(t, ts)
	ctx := context.Background()
	created, err := widgets(ts).Create(ctx, widget("s", map[string]any{"size": int64(2)}), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	created.Object["status"] = map[string]any{"replicas": int64(2)}
	if _, err := widgets(ts).UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	scale, err := widgets(ts).Get(ctx, "s", metav1.GetOptions{}, "scale")
	if err != nil {
		t.Fatal(err)
	}
	if scale.GetAPIVersion() != "autoscaling/v1" || scale.GetKind() != "Scale" {
		t.Errorf("scale is %s %s", scale.GetAPIVersion(), scale.GetKind())
	}
	if jsonString(scale.Object["spec"]) != `{"replicas":2}` || jsonString(scale.Object["status"]) != `{"replicas":2}` {
		t.Errorf("scale spec %s status %s", jsonString(scale.Object["spec"]), jsonString(scale.Object["status"]))
	}
	patched, err := widgets(ts).Patch(ctx, "s", types.MergePatchType, []byte(`{"spec":{"replicas":5}}`), metav1.PatchOptions{}, "scale")
	if err != nil {
		t.Fatal(err)
	}
	if jsonString(patched.Object["spec"]) != `{"replicas":5}` {
		t.Errorf("patched scale spec %s", jsonString(patched.Object["spec"]))
	}
	obj, err := widgets(ts).Get(ctx, "s", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if size, _, _ := unstructured.NestedInt64(obj.Object, "spec", "size"); size != 5 || obj.GetGeneration() != 2 {
		t.Errorf("after scaling: spec.size %d generation %d, want 5 and 2", size, obj.GetGeneration())
	}
	scale.Object["spec"] = map[string]any{"replicas": int64(50)}
	_, err = widgets(ts).Update(ctx, scale, metav1.UpdateOptions{}, "scale")
	if !apierrors.IsConflict(err) {
		t.Errorf("update of a stale Scale: %v, want 409", err)
	}
	scale.SetResourceVersion("")
	_, err = widgets(ts).Update(ctx, scale, metav1.UpdateOptions{}, "scale")
	checkStatusErr(t, err, statusWant{code: http.StatusUnprocessableEntity, reason: metav1.StatusReasonInvalid,
		message: `Widget.example.com "s" is invalid: spec.size: Invalid value: 50: spec.size in body should be less than or equal to 10`})
}

// TestCRDKeepsPatchExtensions: x-kubernetes-patch-* in a CRD's schema are
// kept (apiextensions.k8s.io/v1 has no fields for them) and not warned about.
func TestCRDKeepsPatchExtensions(t *testing.T) {
	ts := newTestServer(t)
	data, err := os.ReadFile("testdata/widgets-crd.yaml")
	if err != nil {
		t.Fatal(err)
	}
	body, err := yaml.YAMLToJSON(data)
	if err != nil {
		t.Fatal(err)
	}
	res := rawCall(t, ts, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions?fieldValidation=Strict",
		map[string]string{"Content-Type": "application/json"}, body)
	if res.code != http.StatusCreated || len(res.header.Values("Warning")) > 0 {
		t.Fatalf("create under Strict: %d, warnings %q: %s", res.code, res.header.Values("Warning"), res.body)
	}
	crd, err := ts.dynamic.Resource(gvrCRDs).Get(context.Background(), "widgets.example.com", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	containers := lookupAny(crd.Object, "spec", "versions", 0, "schema", "openAPIV3Schema", "properties", "spec", "properties", "containers")
	m, _ := containers.(map[string]any)
	if m["x-kubernetes-patch-merge-key"] != "name" || m["x-kubernetes-patch-strategy"] != "merge" {
		t.Errorf("stored spec.containers schema = %s", jsonString(containers))
	}
}

func lookupAny(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, _ := v.(map[string]any)
			v = m[k]
		case int:
			l, _ := v.([]any)
			if k >= len(l) {
				return nil
			}
			v = l[k]
		}
	}
	return v
}
