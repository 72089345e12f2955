package apiserver

// End-to-end tests driving the server with client-go's typed, dynamic and
// REST clients: CRUD of namespaced and cluster-scoped kinds, every patch
// type, dry runs, kube-apiserver's defaulting and validation of
// Deployments, namespaces and finalizers, deletes, lists (pager,
// continue, resourceVersion rules) and watches (including after a real etcd
// compaction). Expected values are kube-apiserver v1.37's answers.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/pager"
	"k8s.io/utils/ptr"

	"github.com/stratadev/strata/storage"
)

// ---------------------------------------------------------------------------
// Helpers shared by clientgo_test.go, informer_test.go and badinput_test.go.

var (
	gvrConfigMaps   = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	gvrDeployments  = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	gvrClusterRoles = schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"}
)

// httpResult is the answer to a raw HTTP request.
type httpResult struct {
	code   int
	header http.Header
	body   []byte
}

var rawHTTPClient = &http.Client{Timeout: 30 * time.Second}

// rawCall sends one request to the test server over HTTP. A transport
// error (for example a dropped connection) fails the test.
func rawCall(t testing.TB, ts *testServer, method, path string, header map[string]string, body []byte) httpResult {
	t.Helper()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, ts.http.URL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := rawHTTPClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: reading the answer: %v", method, path, err)
	}
	return httpResult{code: resp.StatusCode, header: resp.Header, body: data}
}

// parseStatusBody decodes a body that must be a metav1.Status.
func parseStatusBody(t testing.TB, body []byte) metav1.Status {
	t.Helper()
	var st metav1.Status
	if err := json.Unmarshal(body, &st); err != nil {
		t.Fatalf("the answer is not a Status: %v\n%s", err, body)
	}
	if st.Kind != "Status" || st.APIVersion != "v1" {
		t.Fatalf("the answer is not a Status (kind %q, apiVersion %q):\n%s", st.Kind, st.APIVersion, body)
	}
	return st
}

// statusWant is the expected part of a Status.
type statusWant struct {
	code    int32
	reason  metav1.StatusReason
	message string                // exact, when set
	prefix  string                // message prefix, when set
	details *metav1.StatusDetails // compared as a whole, when set
}

func checkStatus(t testing.TB, got metav1.Status, want statusWant) {
	t.Helper()
	if got.Status != metav1.StatusFailure {
		t.Errorf("status = %q, want %q", got.Status, metav1.StatusFailure)
	}
	if got.Code != want.code {
		t.Errorf("code = %d, want %d (message %q)", got.Code, want.code, got.Message)
	}
	if got.Reason != want.reason {
		t.Errorf("reason = %q, want %q (message %q)", got.Reason, want.reason, got.Message)
	}
	if want.message != "" && got.Message != want.message {
		t.Errorf("message:\n got: %s\nwant: %s", got.Message, want.message)
	}
	if want.prefix != "" && !strings.HasPrefix(got.Message, want.prefix) {
		t.Errorf("message:\n got: %s\nwant a message starting with: %s", got.Message, want.prefix)
	}
	if want.details != nil {
		if diff := cmp.Diff(want.details, got.Details); diff != "" {
			t.Errorf("details (-want +got):\n%s", diff)
		}
	}
}

// checkStatusErr checks a client error carrying a Status.
func checkStatusErr(t testing.TB, err error, want statusWant) {
	t.Helper()
	var se *apierrors.StatusError
	if !errors.As(err, &se) {
		t.Fatalf("error = %v (%T), want a Status error with code %d", err, err, want.code)
	}
	checkStatus(t, se.ErrStatus, want)
}

// metaOf returns an object's metadata.
func metaOf(t testing.TB, obj runtime.Object) metav1.Object {
	t.Helper()
	m, err := meta.Accessor(obj)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// listNames returns the names (namespace/name when namespaced) of a list's items in order.
func listNames(t testing.TB, list runtime.Object) []string {
	t.Helper()
	items, err := meta.ExtractList(list)
	if err != nil {
		t.Fatal(err)
	}
	names := []string{}
	for _, it := range items {
		m := metaOf(t, it)
		names = append(names, m.GetName())
	}
	return names
}

func newConfigMap(name string, data map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: data}
}

// newDeployment is a minimal valid Deployment with one container "web".
func newDeployment(name, image string) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: image}}},
			},
		},
	}
}

func mustCreateConfigMap(t testing.TB, cms typedcorev1.ConfigMapInterface, name string, data map[string]string, labels map[string]string) *corev1.ConfigMap {
	t.Helper()
	cm := newConfigMap(name, data)
	cm.Labels = labels
	out, err := cms.Create(context.Background(), cm, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating configmap %s: %v", name, err)
	}
	return out
}

func rvInt(t testing.TB, rv string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(rv, 10, 64)
	if err != nil {
		t.Fatalf("resourceVersion %q: %v", rv, err)
	}
	return n
}

// nextEvent reads one watch event or fails after the timeout.
func nextEvent(t testing.TB, w watch.Interface, timeout time.Duration) watch.Event {
	t.Helper()
	select {
	case ev, ok := <-w.ResultChan():
		if !ok {
			t.Fatal("the watch ended early")
		}
		return ev
	case <-time.After(timeout):
		t.Fatalf("no watch event within %v", timeout)
	}
	return watch.Event{}
}

// eventString is "TYPE name" for objects and "BOOKMARK" for bookmarks.
func eventString(t testing.TB, ev watch.Event) string {
	t.Helper()
	if ev.Type == watch.Bookmark {
		return string(ev.Type)
	}
	if st, ok := ev.Object.(*metav1.Status); ok {
		return fmt.Sprintf("%s %d %s", ev.Type, st.Code, st.Reason)
	}
	return fmt.Sprintf("%s %s", ev.Type, metaOf(t, ev.Object).GetName())
}

// etcdRevision is the current revision of the shared etcd.
func etcdRevision(t testing.TB) int64 {
	t.Helper()
	resp, err := testEtcd.Get(context.Background(), "strata-test-revision-probe")
	if err != nil {
		t.Fatal(err)
	}
	return resp.Header.Revision
}

// compactNow compacts the shared etcd at its current revision through the
// compact_rev_key protocol, so that every store learns of it.
func compactNow(t testing.TB) int64 {
	t.Helper()
	rev := etcdRevision(t)
	if err := storage.Compact(context.Background(), testEtcd, rev); err != nil {
		t.Fatal(err)
	}
	return rev
}

// eventually retries check every 50ms until it returns "" or the timeout
// passes; then it fails with the last complaint.
func eventually(t testing.TB, timeout time.Duration, check func() string) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		msg := check()
		if msg == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %v: %s", timeout, msg)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// ---------------------------------------------------------------------------
// CRUD

// crudClient is what typed clients of every kind offer (and dynamicCRUD
// adapts the dynamic client to).
type crudClient[T runtime.Object, L runtime.Object] interface {
	Create(context.Context, T, metav1.CreateOptions) (T, error)
	Get(context.Context, string, metav1.GetOptions) (T, error)
	Update(context.Context, T, metav1.UpdateOptions) (T, error)
	List(context.Context, metav1.ListOptions) (L, error)
	Delete(context.Context, string, metav1.DeleteOptions) error
}

type dynamicCRUD struct{ ri dynamic.ResourceInterface }

func (d dynamicCRUD) Create(ctx context.Context, u *unstructured.Unstructured, o metav1.CreateOptions) (*unstructured.Unstructured, error) {
	return d.ri.Create(ctx, u, o)
}
func (d dynamicCRUD) Get(ctx context.Context, name string, o metav1.GetOptions) (*unstructured.Unstructured, error) {
	return d.ri.Get(ctx, name, o)
}
func (d dynamicCRUD) Update(ctx context.Context, u *unstructured.Unstructured, o metav1.UpdateOptions) (*unstructured.Unstructured, error) {
	return d.ri.Update(ctx, u, o)
}
func (d dynamicCRUD) List(ctx context.Context, o metav1.ListOptions) (*unstructured.UnstructuredList, error) {
	return d.ri.List(ctx, o)
}
func (d dynamicCRUD) Delete(ctx context.Context, name string, o metav1.DeleteOptions) error {
	return d.ri.Delete(ctx, name, o)
}

// toUnstructured converts a typed object for the dynamic client.
func toUnstructured(t testing.TB, obj runtime.Object, gvk schema.GroupVersionKind) *unstructured.Unstructured {
	t.Helper()
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetGroupVersionKind(gvk)
	return u
}

// runCRUD creates, gets, updates (a label), lists and deletes obj, and
// checks the NotFound that follows.
func runCRUD[T runtime.Object, L runtime.Object](t *testing.T, c crudClient[T, L], obj T, gr schema.GroupResource) {
	ctx := context.Background()
	created, err := c.Create(ctx, obj, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	cm := metaOf(t, created)
	name := cm.GetName()
	if cm.GetUID() == "" || cm.GetResourceVersion() == "" || cm.GetCreationTimestamp().Time.IsZero() {
		t.Errorf("create: system metadata not set: uid %q, resourceVersion %q, creationTimestamp %v",
			cm.GetUID(), cm.GetResourceVersion(), cm.GetCreationTimestamp())
	}
	got, err := c.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get: %v", err)
	}
	if gm := metaOf(t, got); gm.GetUID() != cm.GetUID() || gm.GetResourceVersion() != cm.GetResourceVersion() {
		t.Errorf("get: uid %q resourceVersion %q, want %q %q", gm.GetUID(), gm.GetResourceVersion(), cm.GetUID(), cm.GetResourceVersion())
	}
	upd := got.DeepCopyObject().(T)
	metaOf(t, upd).SetLabels(map[string]string{"step": "updated"})
	updated, err := c.Update(ctx, upd, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("update: %v", err)
	}
	um := metaOf(t, updated)
	if diff := cmp.Diff(map[string]string{"step": "updated"}, um.GetLabels()); diff != "" {
		t.Errorf("update: labels (-want +got):\n%s", diff)
	}
	if rvInt(t, um.GetResourceVersion()) <= rvInt(t, cm.GetResourceVersion()) || um.GetUID() != cm.GetUID() {
		t.Errorf("update: resourceVersion %s (created %s), uid %s (created %s)",
			um.GetResourceVersion(), cm.GetResourceVersion(), um.GetUID(), cm.GetUID())
	}
	list, err := c.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("list: %v", err)
	}
	if diff := cmp.Diff([]string{name}, listNames(t, list)); diff != "" {
		t.Errorf("list (-want +got):\n%s", diff)
	}
	if lm, _ := meta.ListAccessor(list); rvInt(t, lm.GetResourceVersion()) < rvInt(t, um.GetResourceVersion()) {
		t.Errorf("list resourceVersion %s is older than the update's %s", lm.GetResourceVersion(), um.GetResourceVersion())
	}
	if err := c.Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete: %v", err)
	}
	_, err = c.Get(ctx, name, metav1.GetOptions{})
	checkStatusErr(t, err, statusWant{code: 404, reason: metav1.StatusReasonNotFound,
		message: fmt.Sprintf("%s %q not found", gr.String(), name),
		details: &metav1.StatusDetails{Name: name, Group: gr.Group, Kind: gr.Resource}})
}

func TestClientCRUD(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "reader"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "list"}}}}
	tests := []struct {
		name string
		run  func(t *testing.T)
	}{
		{"typed/configmap", func(t *testing.T) {
			runCRUD(t, ts.client.CoreV1().ConfigMaps("default"), newConfigMap("typed", map[string]string{"k": "v"}),
				gvrConfigMaps.GroupResource())
		}},
		{"typed/deployment", func(t *testing.T) {
			runCRUD(t, ts.client.AppsV1().Deployments("kube-public"), newDeployment("typed", "nginx:1.27"),
				gvrDeployments.GroupResource())
		}},
		{"typed/clusterrole", func(t *testing.T) {
			runCRUD(t, ts.client.RbacV1().ClusterRoles(), role.DeepCopy(), gvrClusterRoles.GroupResource())
		}},
		{"dynamic/configmap", func(t *testing.T) {
			runCRUD(t, dynamicCRUD{ts.dynamic.Resource(gvrConfigMaps).Namespace("kube-system")},
				toUnstructured(t, newConfigMap("dyn", map[string]string{"k": "v"}), corev1.SchemeGroupVersion.WithKind("ConfigMap")),
				gvrConfigMaps.GroupResource())
		}},
		{"dynamic/deployment", func(t *testing.T) {
			runCRUD(t, dynamicCRUD{ts.dynamic.Resource(gvrDeployments).Namespace("kube-node-lease")},
				toUnstructured(t, newDeployment("dyn", "nginx:1.27"), appsv1.SchemeGroupVersion.WithKind("Deployment")),
				gvrDeployments.GroupResource())
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, tc.run)
	}
	// The cluster-scoped kind through the dynamic client needs its own
	// server: the typed case above already listed the only ClusterRole.
	t.Run("dynamic/clusterrole", func(t *testing.T) {
		ts := newTestServer(t)
		runCRUD(t, dynamicCRUD{ts.dynamic.Resource(gvrClusterRoles)},
			toUnstructured(t, role.DeepCopy(), rbacv1.SchemeGroupVersion.WithKind("ClusterRole")),
			gvrClusterRoles.GroupResource())
	})
}

// ---------------------------------------------------------------------------
// Patches

func TestClientPatchTypes(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	ctx := context.Background()
	const (
		typed   = "typed"
		dynamic = "dynamic"
	)
	tests := []struct {
		name     string
		via      string
		resource string // "configmaps" or "deployments"
		pt       types.PatchType
		patch    string
		// wantData is the ConfigMap's data after the patch (initially a=1, b=2);
		// wantContainers the Deployment's "name=image" list (initially web=nginx:1.27).
		wantData       map[string]string
		wantContainers []string
	}{
		{name: "strategic configmap", via: typed, resource: "configmaps", pt: types.StrategicMergePatchType,
			patch: `{"data":{"c":"3"}}`, wantData: map[string]string{"a": "1", "b": "2", "c": "3"}},
		{name: "merge configmap", via: typed, resource: "configmaps", pt: types.MergePatchType,
			patch: `{"data":{"a":null,"b":"20"}}`, wantData: map[string]string{"b": "20"}},
		{name: "json configmap", via: typed, resource: "configmaps", pt: types.JSONPatchType,
			patch:    `[{"op":"test","path":"/data/a","value":"1"},{"op":"remove","path":"/data/a"},{"op":"add","path":"/data/d","value":"4"}]`,
			wantData: map[string]string{"b": "2", "d": "4"}},
		{name: "strategic configmap", via: dynamic, resource: "configmaps", pt: types.StrategicMergePatchType,
			patch: `{"data":{"a":null}}`, wantData: map[string]string{"b": "2"}},
		{name: "merge configmap", via: dynamic, resource: "configmaps", pt: types.MergePatchType,
			patch: `{"data":{"c":"3"}}`, wantData: map[string]string{"a": "1", "b": "2", "c": "3"}},
		{name: "json configmap", via: dynamic, resource: "configmaps", pt: types.JSONPatchType,
			patch: `[{"op":"replace","path":"/data","value":{"z":"26"}}]`, wantData: map[string]string{"z": "26"}},

		// Containers merge by name under a strategic patch; a merge patch
		// replaces the list.
		{name: "strategic deployment adds a container", via: typed, resource: "deployments", pt: types.StrategicMergePatchType,
			patch:          `{"spec":{"template":{"spec":{"containers":[{"name":"sidecar","image":"busybox:1.36"}]}}}}`,
			wantContainers: []string{"web=nginx:1.27", "sidecar=busybox:1.36"}},
		{name: "strategic deployment changes a container", via: dynamic, resource: "deployments", pt: types.StrategicMergePatchType,
			patch:          `{"spec":{"template":{"spec":{"containers":[{"name":"web","image":"nginx:1.28"}]}}}}`,
			wantContainers: []string{"web=nginx:1.28"}},
		{name: "strategic deployment deletes a container", via: typed, resource: "deployments", pt: types.StrategicMergePatchType,
			patch:          `{"spec":{"template":{"spec":{"containers":[{"name":"web","$patch":"delete"},{"name":"other","image":"redis:7"}]}}}}`,
			wantContainers: []string{"other=redis:7"}},
		{name: "merge deployment replaces the list", via: typed, resource: "deployments", pt: types.MergePatchType,
			patch:          `{"spec":{"template":{"spec":{"containers":[{"name":"sidecar","image":"busybox:1.36"}]}}}}`,
			wantContainers: []string{"sidecar=busybox:1.36"}},
		{name: "merge deployment replaces the list", via: dynamic, resource: "deployments", pt: types.MergePatchType,
			patch:          `{"spec":{"template":{"spec":{"containers":[{"name":"a","image":"x:1"},{"name":"b","image":"y:1"}]}}}}`,
			wantContainers: []string{"a=x:1", "b=y:1"}},
		{name: "json deployment appends", via: typed, resource: "deployments", pt: types.JSONPatchType,
			patch:          `[{"op":"add","path":"/spec/template/spec/containers/-","value":{"name":"sidecar","image":"busybox:1.36"}}]`,
			wantContainers: []string{"web=nginx:1.27", "sidecar=busybox:1.36"}},
		{name: "json deployment replaces an image", via: dynamic, resource: "deployments", pt: types.JSONPatchType,
			patch:          `[{"op":"replace","path":"/spec/template/spec/containers/0/image","value":"nginx:2"}]`,
			wantContainers: []string{"web=nginx:2"}},
	}
	for i, tc := range tests {
		t.Run(tc.via+"/"+tc.name, func(t *testing.T) {
			name := fmt.Sprintf("patch-%d", i)
			var gvr schema.GroupVersionResource
			switch tc.resource {
			case "configmaps":
				gvr = gvrConfigMaps
				mustCreateConfigMap(t, ts.client.CoreV1().ConfigMaps("default"), name, map[string]string{"a": "1", "b": "2"}, nil)
			default:
				gvr = gvrDeployments
				if _, err := ts.client.AppsV1().Deployments("default").Create(ctx, newDeployment(name, "nginx:1.27"), metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			var out map[string]any
			if tc.via == dynamic {
				u, err := ts.dynamic.Resource(gvr).Namespace("default").Patch(ctx, name, tc.pt, []byte(tc.patch), metav1.PatchOptions{})
				if err != nil {
					t.Fatalf("patch: %v", err)
				}
				out = u.Object
			} else {
				var obj runtime.Object
				var err error
				if tc.resource == "configmaps" {
					obj, err = ts.client.CoreV1().ConfigMaps("default").Patch(ctx, name, tc.pt, []byte(tc.patch), metav1.PatchOptions{})
				} else {
					obj, err = ts.client.AppsV1().Deployments("default").Patch(ctx, name, tc.pt, []byte(tc.patch), metav1.PatchOptions{})
				}
				if err != nil {
					t.Fatalf("patch: %v", err)
				}
				if out, err = runtime.DefaultUnstructuredConverter.ToUnstructured(obj); err != nil {
					t.Fatal(err)
				}
			}
			// The stored object must be what the patch answered.
			stored, err := ts.dynamic.Resource(gvr).Namespace("default").Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			for what, obj := range map[string]map[string]any{"answer": out, "stored": stored.Object} {
				if tc.wantData != nil {
					data, _, _ := unstructured.NestedStringMap(obj, "data")
					if diff := cmp.Diff(tc.wantData, data); diff != "" {
						t.Errorf("%s: data (-want +got):\n%s", what, diff)
					}
				}
				if tc.wantContainers != nil {
					containers, _, _ := unstructured.NestedSlice(obj, "spec", "template", "spec", "containers")
					got := []string{}
					for _, c := range containers {
						m, _ := c.(map[string]any)
						got = append(got, fmt.Sprintf("%v=%v", m["name"], m["image"]))
					}
					if diff := cmp.Diff(tc.wantContainers, got); diff != "" {
						t.Errorf("%s: containers (-want +got):\n%s", what, diff)
					}
				}
			}
		})
	}
}

// ---------------------------------------------------------------------------
// generateName, conflicts, unconditional updates, dry runs

func TestClientGenerateName(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	ctx := context.Background()
	cms := ts.client.CoreV1().ConfigMaps("default")
	seen := map[string]bool{}
	for range 3 {
		out, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{GenerateName: "gen-"}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		// kube-apiserver appends 5 random characters to generateName.
		if !strings.HasPrefix(out.Name, "gen-") || len(out.Name) != len("gen-")+5 || out.GenerateName != "gen-" {
			t.Errorf("name %q generateName %q, want gen- and 5 characters", out.Name, out.GenerateName)
		}
		if seen[out.Name] {
			t.Errorf("name %q generated twice", out.Name)
		}
		seen[out.Name] = true
		if _, err := cms.Get(ctx, out.Name, metav1.GetOptions{}); err != nil {
			t.Errorf("get %s: %v", out.Name, err)
		}
	}
	// A name given with generateName wins.
	out, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "fixed", GenerateName: "gen-"}}, metav1.CreateOptions{})
	if err != nil || out.Name != "fixed" {
		t.Errorf("create with name and generateName: %v, name %q, want fixed", err, out.GetName())
	}
}

func TestClientUpdateConflict(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	ctx := context.Background()
	cms := ts.client.CoreV1().ConfigMaps("default")
	first := mustCreateConfigMap(t, cms, "cas", map[string]string{"n": "0"}, nil)

	second := first.DeepCopy()
	second.Data["n"] = "1"
	second, err := cms.Update(ctx, second, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	stale := first.DeepCopy()
	stale.Data["n"] = "stale"
	_, err = cms.Update(ctx, stale, metav1.UpdateOptions{})
	if !apierrors.IsConflict(err) {
		t.Fatalf("update with a stale resourceVersion: %v, want a Conflict", err)
	}
	checkStatusErr(t, err, statusWant{code: 409, reason: metav1.StatusReasonConflict,
		message: `Operation cannot be fulfilled on configmaps "cas": the object has been modified; please apply your changes to the latest version and try again`,
		details: &metav1.StatusDetails{Name: "cas", Kind: "configmaps"}})

	// A stale patch (resourceVersion in the patch) is a conflict too.
	_, err = cms.Patch(ctx, "cas", types.MergePatchType,
		[]byte(fmt.Sprintf(`{"metadata":{"resourceVersion":%q},"data":{"n":"stale"}}`, first.ResourceVersion)), metav1.PatchOptions{})
	if !apierrors.IsConflict(err) {
		t.Errorf("patch with a stale resourceVersion: %v, want a Conflict", err)
	}

	// Without a resourceVersion an update is unconditional (ConfigMap and
	// Deployment strategies allow it).
	blind := newConfigMap("cas", map[string]string{"n": "blind"})
	out, err := cms.Update(ctx, blind, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("update without resourceVersion: %v", err)
	}
	if out.Data["n"] != "blind" || rvInt(t, out.ResourceVersion) <= rvInt(t, second.ResourceVersion) || out.UID != first.UID {
		t.Errorf("update without resourceVersion: data %v rv %s uid %s", out.Data, out.ResourceVersion, out.UID)
	}
	deps := ts.client.AppsV1().Deployments("default")
	if _, err := deps.Create(ctx, newDeployment("cas", "nginx:1"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	d, err := deps.Update(ctx, newDeployment("cas", "nginx:2"), metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("deployment update without resourceVersion: %v", err)
	}
	if d.Spec.Template.Spec.Containers[0].Image != "nginx:2" || d.Generation != 2 {
		t.Errorf("deployment update without resourceVersion: image %s generation %d", d.Spec.Template.Spec.Containers[0].Image, d.Generation)
	}
}

func TestClientDryRun(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	ctx := context.Background()
	cms := ts.client.CoreV1().ConfigMaps("default")
	dry := []string{metav1.DryRunAll}
	orig := mustCreateConfigMap(t, cms, "dry", map[string]string{"a": "1"}, nil)

	tests := []struct {
		name string
		do   func() (*corev1.ConfigMap, error) // nil object for delete
		// wantAnswer checks the dry run's answer.
		wantAnswer func(t *testing.T, out *corev1.ConfigMap)
	}{
		{"create", func() (*corev1.ConfigMap, error) {
			return cms.Create(ctx, newConfigMap("dry-new", map[string]string{"x": "y"}), metav1.CreateOptions{DryRun: dry})
		}, func(t *testing.T, out *corev1.ConfigMap) {
			if out.Name != "dry-new" || out.Data["x"] != "y" || out.ResourceVersion != "" || out.UID == "" {
				t.Errorf("answer: name %q data %v resourceVersion %q uid %q; want dry-new, x=y, no resourceVersion, a uid",
					out.Name, out.Data, out.ResourceVersion, out.UID)
			}
		}},
		{"update", func() (*corev1.ConfigMap, error) {
			cm := orig.DeepCopy()
			cm.Data["a"] = "2"
			return cms.Update(ctx, cm, metav1.UpdateOptions{DryRun: dry})
		}, func(t *testing.T, out *corev1.ConfigMap) {
			if out.Data["a"] != "2" || out.ResourceVersion != orig.ResourceVersion {
				t.Errorf("answer: data %v resourceVersion %s; want a=2 at %s", out.Data, out.ResourceVersion, orig.ResourceVersion)
			}
		}},
		{"patch", func() (*corev1.ConfigMap, error) {
			return cms.Patch(ctx, "dry", types.MergePatchType, []byte(`{"data":{"a":"3"}}`), metav1.PatchOptions{DryRun: dry})
		}, func(t *testing.T, out *corev1.ConfigMap) {
			if out.Data["a"] != "3" || out.ResourceVersion != orig.ResourceVersion {
				t.Errorf("answer: data %v resourceVersion %s; want a=3 at %s", out.Data, out.ResourceVersion, orig.ResourceVersion)
			}
		}},
		{"delete", func() (*corev1.ConfigMap, error) {
			return nil, cms.Delete(ctx, "dry", metav1.DeleteOptions{DryRun: dry})
		}, nil},
		{"deletecollection", func() (*corev1.ConfigMap, error) {
			return nil, cms.DeleteCollection(ctx, metav1.DeleteOptions{DryRun: dry}, metav1.ListOptions{})
		}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, err := tc.do()
			if err != nil {
				t.Fatalf("dry run: %v", err)
			}
			if tc.wantAnswer != nil {
				tc.wantAnswer(t, out)
			}
			list, err := cms.List(ctx, metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if len(list.Items) != 1 || list.Items[0].Name != "dry" || list.Items[0].ResourceVersion != orig.ResourceVersion ||
				list.Items[0].Data["a"] != "1" {
				t.Errorf("after the dry run the namespace holds %v, want only dry unchanged (rv %s, a=1)", list.Items, orig.ResourceVersion)
			}
		})
	}
}

// ---------------------------------------------------------------------------
// Deployments: defaults, generation, status

func TestClientDeploymentDefaults(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	d := newDeployment("defaults", "nginx")
	d.Spec.Template.Spec.Containers = append(d.Spec.Template.Spec.Containers,
		corev1.Container{Name: "side", Image: "busybox:1.36", Ports: []corev1.ContainerPort{{ContainerPort: 80}}})
	out, err := ts.client.AppsV1().Deployments("default").Create(context.Background(), d, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	labels := map[string]string{"app": "defaults"}
	quarter := intstr.FromString("25%")
	want := appsv1.DeploymentSpec{
		Replicas: ptr.To[int32](1),
		Selector: &metav1.LabelSelector{MatchLabels: labels},
		Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: labels},
			Spec: corev1.PodSpec{
				Containers: []corev1.Container{{
					Name: "web", Image: "nginx",
					TerminationMessagePath:   "/dev/termination-log",
					TerminationMessagePolicy: corev1.TerminationMessageReadFile,
					ImagePullPolicy:          corev1.PullAlways, // no tag means :latest
				}, {
					Name: "side", Image: "busybox:1.36",
					Ports:                    []corev1.ContainerPort{{ContainerPort: 80, Protocol: corev1.ProtocolTCP}},
					TerminationMessagePath:   "/dev/termination-log",
					TerminationMessagePolicy: corev1.TerminationMessageReadFile,
					ImagePullPolicy:          corev1.PullIfNotPresent,
				}},
				RestartPolicy:                 corev1.RestartPolicyAlways,
				TerminationGracePeriodSeconds: ptr.To[int64](30),
				DNSPolicy:                     corev1.DNSClusterFirst,
				SecurityContext:               &corev1.PodSecurityContext{},
				SchedulerName:                 corev1.DefaultSchedulerName,
			},
		},
		Strategy: appsv1.DeploymentStrategy{
			Type:          appsv1.RollingUpdateDeploymentStrategyType,
			RollingUpdate: &appsv1.RollingUpdateDeployment{MaxUnavailable: &quarter, MaxSurge: &quarter},
		},
		RevisionHistoryLimit:    ptr.To[int32](10),
		ProgressDeadlineSeconds: ptr.To[int32](600),
	}
	if diff := cmp.Diff(want, out.Spec); diff != "" {
		t.Errorf("spec (-want +got):\n%s", diff)
	}
	if out.Generation != 1 {
		t.Errorf("generation = %d, want 1", out.Generation)
	}
	if diff := cmp.Diff(appsv1.DeploymentStatus{}, out.Status); diff != "" {
		t.Errorf("status (-want +got):\n%s", diff)
	}
	// The stored object is the defaulted one.
	got, err := ts.client.AppsV1().Deployments("default").Get(context.Background(), "defaults", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got.Spec); diff != "" {
		t.Errorf("stored spec (-want +got):\n%s", diff)
	}
}

// TestClientDeploymentGeneration follows kube-apiserver's deployment
// strategy (pkg/registry/apps/deployment/strategy.go): the generation is 1
// on create and bumped when the spec or the annotations change (annotations
// are copied to ReplicaSets), not for labels or status; the status
// subresource keeps spec and labels, the main resource keeps status.
func TestClientDeploymentGeneration(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	ctx := context.Background()
	deps := ts.client.AppsV1().Deployments("default")
	cur, err := deps.Create(ctx, newDeployment("gen", "nginx:1"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if cur.Generation != 1 {
		t.Fatalf("generation on create = %d, want 1", cur.Generation)
	}
	steps := []struct {
		name           string
		status         bool // through UpdateStatus
		change         func(d *appsv1.Deployment)
		wantGeneration int64
		check          func(t *testing.T, d *appsv1.Deployment)
	}{
		{"label", false, func(d *appsv1.Deployment) { d.Labels = map[string]string{"tier": "web"} }, 1, nil},
		{"no change", false, func(d *appsv1.Deployment) {}, 1, nil},
		{"annotation", false, func(d *appsv1.Deployment) { d.Annotations = map[string]string{"note": "x"} }, 2, nil},
		{"replicas", false, func(d *appsv1.Deployment) { d.Spec.Replicas = ptr.To[int32](3) }, 3, nil},
		{"template image", false, func(d *appsv1.Deployment) { d.Spec.Template.Spec.Containers[0].Image = "nginx:2" }, 4, nil},
		{"status on the main resource is ignored", false, func(d *appsv1.Deployment) {
			d.Status.Replicas, d.Status.ObservedGeneration = 9, 4
		}, 4, func(t *testing.T, d *appsv1.Deployment) {
			if diff := cmp.Diff(appsv1.DeploymentStatus{}, d.Status); diff != "" {
				t.Errorf("status (-want +got):\n%s", diff)
			}
		}},
		{"status subresource ignores spec and labels", true, func(d *appsv1.Deployment) {
			d.Status.Replicas, d.Status.ObservedGeneration = 3, 4
			d.Spec.Replicas = ptr.To[int32](7)
			d.Labels = map[string]string{"tier": "changed"}
			d.Annotations = map[string]string{"note": "y"}
		}, 4, func(t *testing.T, d *appsv1.Deployment) {
			if d.Status.Replicas != 3 || d.Status.ObservedGeneration != 4 {
				t.Errorf("status = %+v, want replicas 3 observedGeneration 4", d.Status)
			}
			if *d.Spec.Replicas != 3 || d.Labels["tier"] != "web" {
				t.Errorf("spec.replicas %d labels %v, want 3 and tier=web (kept by the status strategy)", *d.Spec.Replicas, d.Labels)
			}
		}},
		{"main resource keeps the status", false, func(d *appsv1.Deployment) {
			d.Status = appsv1.DeploymentStatus{}
		}, 4, func(t *testing.T, d *appsv1.Deployment) {
			if d.Status.Replicas != 3 {
				t.Errorf("status.replicas = %d, want 3", d.Status.Replicas)
			}
		}},
	}
	for _, st := range steps {
		next := cur.DeepCopy()
		st.change(next)
		var out *appsv1.Deployment
		if st.status {
			out, err = deps.UpdateStatus(ctx, next, metav1.UpdateOptions{})
		} else {
			out, err = deps.Update(ctx, next, metav1.UpdateOptions{})
		}
		if err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if out.Generation != st.wantGeneration {
			t.Errorf("%s: generation = %d, want %d", st.name, out.Generation, st.wantGeneration)
		}
		stored, err := deps.Get(ctx, "gen", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(out, stored); diff != "" {
			t.Errorf("%s: stored object differs from the answer (-answer +stored):\n%s", st.name, diff)
		}
		if st.check != nil {
			t.Run(st.name, func(t *testing.T) { st.check(t, stored) })
		}
		cur = stored
	}
	// A spec patch bumps it too, a status patch does not.
	p, err := deps.Patch(ctx, "gen", types.StrategicMergePatchType, []byte(`{"spec":{"paused":true}}`), metav1.PatchOptions{})
	if err != nil || p.Generation != 5 || !p.Spec.Paused {
		t.Errorf("spec patch: %v, generation %d paused %v, want 5 true", err, p.GetGeneration(), p.Spec.Paused)
	}
	p, err = deps.Patch(ctx, "gen", types.MergePatchType, []byte(`{"status":{"replicas":5},"spec":{"paused":false}}`), metav1.PatchOptions{}, "status")
	if err != nil || p.Generation != 5 || p.Status.Replicas != 5 || !p.Spec.Paused {
		t.Errorf("status patch: %v, generation %d status.replicas %d paused %v, want 5 5 true", err, p.GetGeneration(), p.Status.Replicas, p.Spec.Paused)
	}
}

// ---------------------------------------------------------------------------
// Validation

func TestClientValidationErrors(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	ctx := context.Background()
	deps := ts.client.AppsV1().Deployments("default")
	if _, err := deps.Create(ctx, newDeployment("existing", "nginx:1"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	invalid := func(kind, group, name string, causes ...metav1.StatusCause) *metav1.StatusDetails {
		return &metav1.StatusDetails{Name: name, Group: group, Kind: kind, Causes: causes}
	}
	tests := []struct {
		name    string
		do      func() error
		message string
		details *metav1.StatusDetails
	}{
		{
			name: "configmap name",
			do: func() error {
				_, err := ts.client.CoreV1().ConfigMaps("default").Create(ctx, newConfigMap("Bad_Name", nil), metav1.CreateOptions{})
				return err
			},
			message: `ConfigMap "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
			details: invalid("ConfigMap", "", "Bad_Name", metav1.StatusCause{Type: metav1.CauseTypeFieldValueInvalid,
				Message: `Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
				Field:   "metadata.name"}),
		},
		{
			name: "no name",
			do: func() error {
				_, err := ts.client.CoreV1().ConfigMaps("default").Create(ctx, newConfigMap("", nil), metav1.CreateOptions{})
				return err
			},
			message: `ConfigMap "" is invalid: metadata.name: Required value: name or generateName is required`,
			details: invalid("ConfigMap", "", "", metav1.StatusCause{Type: metav1.CauseTypeFieldValueRequired,
				Message: "Required value: name or generateName is required", Field: "metadata.name"}),
		},
		{
			name: "negative replicas",
			do: func() error {
				d := newDeployment("negative", "nginx:1")
				d.Spec.Replicas = ptr.To[int32](-1)
				_, err := deps.Create(ctx, d, metav1.CreateOptions{})
				return err
			},
			message: `Deployment.apps "negative" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0`,
			details: invalid("Deployment", "apps", "negative", metav1.StatusCause{Type: metav1.CauseTypeFieldValueInvalid,
				Message: "Invalid value: -1: must be greater than or equal to 0", Field: "spec.replicas"}),
		},
		{
			name: "selector does not match the template",
			do: func() error {
				d := newDeployment("mismatch", "nginx:1")
				d.Spec.Template.Labels = map[string]string{"app": "other"}
				_, err := deps.Create(ctx, d, metav1.CreateOptions{})
				return err
			},
			message: "Deployment.apps \"mismatch\" is invalid: spec.template.metadata.labels: Invalid value: {\"app\":\"other\"}: `selector` does not match template `labels`",
			details: invalid("Deployment", "apps", "mismatch", metav1.StatusCause{Type: metav1.CauseTypeFieldValueInvalid,
				Message: "Invalid value: {\"app\":\"other\"}: `selector` does not match template `labels`",
				Field:   "spec.template.metadata.labels"}),
		},
		{
			name: "selector changed on update",
			do: func() error {
				d := newDeployment("existing", "nginx:1")
				d.Spec.Selector.MatchLabels = map[string]string{"app": "moved"}
				d.Spec.Template.Labels = map[string]string{"app": "moved"}
				_, err := deps.Update(ctx, d, metav1.UpdateOptions{})
				return err
			},
			message: `Deployment.apps "existing" is invalid: spec.selector: Invalid value: {"matchLabels":{"app":"moved"}}: field is immutable`,
			details: invalid("Deployment", "apps", "existing", metav1.StatusCause{Type: metav1.CauseTypeFieldValueInvalid,
				Message: `Invalid value: {"matchLabels":{"app":"moved"}}: field is immutable`, Field: "spec.selector"}),
		},
		{
			name: "selector changed by a patch",
			do: func() error {
				_, err := deps.Patch(ctx, "existing", types.StrategicMergePatchType,
					[]byte(`{"spec":{"selector":{"matchLabels":{"app":"moved"}},"template":{"metadata":{"labels":{"app":"moved"}}}}}`), metav1.PatchOptions{})
				return err
			},
			message: `Deployment.apps "existing" is invalid: spec.selector: Invalid value: {"matchLabels":{"app":"moved"}}: field is immutable`,
			details: invalid("Deployment", "apps", "existing", metav1.StatusCause{Type: metav1.CauseTypeFieldValueInvalid,
				Message: `Invalid value: {"matchLabels":{"app":"moved"}}: field is immutable`, Field: "spec.selector"}),
		},
		{
			name: "clusterrole name",
			do: func() error {
				_, err := ts.client.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "a/b"}}, metav1.CreateOptions{})
				return err
			},
			message: `ClusterRole.rbac.authorization.k8s.io "a/b" is invalid: metadata.name: Invalid value: "a/b": may not contain '/'`,
			details: invalid("ClusterRole", "rbac.authorization.k8s.io", "a/b", metav1.StatusCause{Type: metav1.CauseTypeFieldValueInvalid,
				Message: `Invalid value: "a/b": may not contain '/'`, Field: "metadata.name"}),
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.do()
			if !apierrors.IsInvalid(err) {
				t.Fatalf("error = %v, want Invalid", err)
			}
			checkStatusErr(t, err, statusWant{code: 422, reason: metav1.StatusReasonInvalid, message: tc.message, details: tc.details})
		})
	}
	// Nothing invalid was stored, and the existing Deployment kept its selector.
	d, err := deps.Get(ctx, "existing", metav1.GetOptions{})
	if err != nil || d.Spec.Selector.MatchLabels["app"] != "existing" {
		t.Errorf("existing: %v, selector %v", err, d.Spec.Selector)
	}
	list, err := deps.List(ctx, metav1.ListOptions{})
	if err != nil || len(list.Items) != 1 {
		t.Errorf("deployments: %v, %v; want only existing", err, listNames(t, list))
	}
}

// ---------------------------------------------------------------------------
// Namespaces

func TestClientCreateInMissingNamespace(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	ctx := context.Background()
	_, err := ts.client.CoreV1().ConfigMaps("nope").Create(ctx, newConfigMap("x", nil), metav1.CreateOptions{})
	checkStatusErr(t, err, statusWant{code: 404, reason: metav1.StatusReasonNotFound,
		message: `namespaces "nope" not found`, details: &metav1.StatusDetails{Name: "nope", Kind: "namespaces"}})
	_, err = ts.client.AppsV1().Deployments("nope").Create(ctx, newDeployment("x", "nginx:1"), metav1.CreateOptions{})
	checkStatusErr(t, err, statusWant{code: 404, reason: metav1.StatusReasonNotFound,
		message: `namespaces "nope" not found`, details: &metav1.StatusDetails{Name: "nope", Kind: "namespaces"}})
	// Reads of a missing namespace are plain NotFound / empty lists.
	_, err = ts.client.CoreV1().ConfigMaps("nope").Get(ctx, "x", metav1.GetOptions{})
	checkStatusErr(t, err, statusWant{code: 404, reason: metav1.StatusReasonNotFound, message: `configmaps "x" not found`})
	list, err := ts.client.CoreV1().ConfigMaps("nope").List(ctx, metav1.ListOptions{})
	if err != nil || len(list.Items) != 0 {
		t.Errorf("list in a missing namespace: %v, %d items", err, len(list.Items))
	}
}

// namespaceFinalizeTimeout bounds the wait for the background
// finalization of a deleted namespace.
const namespaceFinalizeTimeout = 30 * time.Second

func TestClientNamespaceDeletion(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	ctx := context.Background()
	nss := ts.client.CoreV1().Namespaces()
	ns, err := nss.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "doomed"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ns.Status.Phase != corev1.NamespaceActive || !slices.Equal(ns.Spec.Finalizers, []corev1.FinalizerName{corev1.FinalizerKubernetes}) {
		t.Errorf("new namespace: phase %q finalizers %v, want Active [kubernetes]", ns.Status.Phase, ns.Spec.Finalizers)
	}
	cms := ts.client.CoreV1().ConfigMaps("doomed")
	mustCreateConfigMap(t, cms, "plain", nil, nil)
	held := newConfigMap("held", nil)
	held.Finalizers = []string{"example.com/hold"}
	if _, err := cms.Create(ctx, held, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := ts.client.AppsV1().Deployments("doomed").Create(ctx, newDeployment("web", "nginx:1"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	var code int
	raw, err := ts.client.CoreV1().RESTClient().Delete().AbsPath("/api/v1/namespaces/doomed").Do(ctx).StatusCode(&code).Raw()
	if err != nil {
		t.Fatalf("delete namespace: %v", err)
	}
	var answer corev1.Namespace
	if err := json.Unmarshal(raw, &answer); err != nil {
		t.Fatal(err)
	}
	if code != 200 || answer.Kind != "Namespace" || answer.Name != "doomed" || answer.Status.Phase != corev1.NamespaceTerminating ||
		answer.DeletionTimestamp == nil || !slices.Equal(answer.Spec.Finalizers, []corev1.FinalizerName{corev1.FinalizerKubernetes}) {
		t.Errorf("delete answer: code %d\n%s\nwant 200 with the Namespace, phase Terminating, a deletionTimestamp and finalizer kubernetes", code, raw)
	}

	// Creating in a terminating namespace is forbidden (NamespaceLifecycle).
	// Like kube-apiserver's admission (an informer's lister), strata checks
	// its watch cache: wait until that has seen the deletion.
	eventually(t, 5*time.Second, func() string {
		got, err := nss.Get(ctx, "doomed", metav1.GetOptions{ResourceVersion: "0"})
		if err != nil || got.DeletionTimestamp == nil {
			return fmt.Sprintf("the cache does not show the namespace terminating: %v", err)
		}
		return ""
	})
	_, err = cms.Create(ctx, newConfigMap("late", nil), metav1.CreateOptions{})
	checkStatusErr(t, err, statusWant{code: 403, reason: metav1.StatusReasonForbidden,
		message: `configmaps "late" is forbidden: unable to create new content in namespace doomed because it is being terminated`,
		details: &metav1.StatusDetails{Name: "late", Kind: "configmaps", Causes: []metav1.StatusCause{{
			Type: corev1.NamespaceTerminatingCause, Message: "namespace doomed is being terminated", Field: "metadata.namespace"}}}})

	// The contents go; the object held by a finalizer is marked for
	// deletion and keeps the namespace. Finalization passes run a second
	// apart and each lists every namespaced resource: on a loaded machine
	// running many test servers, a pass can take seconds.
	eventually(t, namespaceFinalizeTimeout, func() string {
		list, err := cms.List(ctx, metav1.ListOptions{})
		if err != nil {
			return err.Error()
		}
		deps, err := ts.client.AppsV1().Deployments("doomed").List(ctx, metav1.ListOptions{})
		if err != nil {
			return err.Error()
		}
		if len(list.Items) != 1 || list.Items[0].Name != "held" || list.Items[0].DeletionTimestamp == nil || len(deps.Items) != 0 {
			return fmt.Sprintf("namespace holds configmaps %v and deployments %v, want only held, marked for deletion",
				listNames(t, list), listNames(t, deps))
		}
		return ""
	})
	got, err := nss.Get(ctx, "doomed", metav1.GetOptions{})
	if err != nil || got.Status.Phase != corev1.NamespaceTerminating {
		t.Fatalf("namespace while an object holds it: %v, phase %q", err, got.Status.Phase)
	}

	// Releasing the finalizer lets the namespace go.
	cur, err := cms.Get(ctx, "held", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cur.Finalizers = nil
	if _, err := cms.Update(ctx, cur, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, namespaceFinalizeTimeout, func() string {
		_, err := nss.Get(ctx, "doomed", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return ""
		}
		return fmt.Sprintf("namespace still there (%v)", err)
	})
	// Recreating it gives an empty, active namespace.
	again, err := nss.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "doomed"}}, metav1.CreateOptions{})
	if err != nil || again.Status.Phase != corev1.NamespaceActive || again.UID == ns.UID {
		t.Fatalf("recreate: %v, phase %q", err, again.Status.Phase)
	}
	list, err := cms.List(ctx, metav1.ListOptions{})
	if err != nil || len(list.Items) != 0 {
		t.Errorf("recreated namespace: %v, configmaps %v", err, listNames(t, list))
	}
}

// ---------------------------------------------------------------------------
// Finalizers, delete answers, preconditions, deletecollection

func TestClientFinalizers(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	ctx := context.Background()
	cms := ts.client.CoreV1().ConfigMaps("default")
	tests := []struct {
		name    string
		release func(name string, cur *corev1.ConfigMap) (*corev1.ConfigMap, error)
	}{
		{"update", func(name string, cur *corev1.ConfigMap) (*corev1.ConfigMap, error) {
			cur.Finalizers = nil
			return cms.Update(ctx, cur, metav1.UpdateOptions{})
		}},
		{"merge patch", func(name string, _ *corev1.ConfigMap) (*corev1.ConfigMap, error) {
			return cms.Patch(ctx, name, types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
		}},
		{"json patch", func(name string, _ *corev1.ConfigMap) (*corev1.ConfigMap, error) {
			return cms.Patch(ctx, name, types.JSONPatchType, []byte(`[{"op":"remove","path":"/metadata/finalizers"}]`), metav1.PatchOptions{})
		}},
		{"strategic patch", func(name string, _ *corev1.ConfigMap) (*corev1.ConfigMap, error) {
			return cms.Patch(ctx, name, types.StrategicMergePatchType,
				[]byte(`{"metadata":{"$deleteFromPrimitiveList/finalizers":["example.com/hold"]}}`), metav1.PatchOptions{})
		}},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			name := fmt.Sprintf("fin-%d", i)
			cm := newConfigMap(name, map[string]string{"k": "v"})
			cm.Finalizers = []string{"example.com/hold"}
			created, err := cms.Create(ctx, cm, metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			var code int
			raw, err := ts.client.CoreV1().RESTClient().Delete().Namespace("default").Resource("configmaps").Name(name).
				Do(ctx).StatusCode(&code).Raw()
			if err != nil {
				t.Fatalf("delete: %v", err)
			}
			var answer corev1.ConfigMap
			if err := json.Unmarshal(raw, &answer); err != nil {
				t.Fatal(err)
			}
			if code != 200 || answer.Kind != "ConfigMap" || answer.Name != name || answer.DeletionTimestamp == nil ||
				answer.DeletionGracePeriodSeconds == nil || *answer.DeletionGracePeriodSeconds != 0 ||
				!slices.Equal(answer.Finalizers, []string{"example.com/hold"}) || answer.UID != created.UID {
				t.Errorf("delete answer: code %d\n%s\nwant 200 with the object, a deletionTimestamp, grace period 0 and its finalizer", code, raw)
			}
			cur, err := cms.Get(ctx, name, metav1.GetOptions{})
			if err != nil || cur.DeletionTimestamp == nil {
				t.Fatalf("get after delete: %v, deletionTimestamp %v", err, cur.GetDeletionTimestamp())
			}
			// A second delete changes nothing and answers the object again.
			if err := cms.Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
				t.Errorf("second delete: %v", err)
			}
			again, err := cms.Get(ctx, name, metav1.GetOptions{})
			if err != nil || !again.DeletionTimestamp.Equal(cur.DeletionTimestamp) {
				t.Errorf("after a second delete: %v, deletionTimestamp %v, want %v", err, again.GetDeletionTimestamp(), cur.DeletionTimestamp)
			}
			out, err := tc.release(name, again)
			if err != nil {
				t.Fatalf("releasing the finalizer: %v", err)
			}
			if len(out.Finalizers) != 0 {
				t.Errorf("answer still has finalizers %v", out.Finalizers)
			}
			_, err = cms.Get(ctx, name, metav1.GetOptions{})
			if !apierrors.IsNotFound(err) {
				t.Errorf("get after releasing the last finalizer: %v, want NotFound", err)
			}
		})
	}
}

func TestClientDeleteAnswer(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	ctx := context.Background()
	cm := mustCreateConfigMap(t, ts.client.CoreV1().ConfigMaps("default"), "gone", nil, nil)
	d, err := ts.client.AppsV1().Deployments("default").Create(ctx, newDeployment("gone", "nginx:1"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cr, err := ts.client.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "gone"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		req  func() ([]byte, int, error)
		want string
	}{
		{"configmap", func() ([]byte, int, error) {
			var code int
			raw, err := ts.client.CoreV1().RESTClient().Delete().Namespace("default").Resource("configmaps").Name("gone").Do(ctx).StatusCode(&code).Raw()
			return raw, code, err
		}, fmt.Sprintf(`{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Success","details":{"name":"gone","kind":"configmaps","uid":%q}}`, cm.UID)},
		{"deployment", func() ([]byte, int, error) {
			var code int
			raw, err := ts.client.AppsV1().RESTClient().Delete().Namespace("default").Resource("deployments").Name("gone").Do(ctx).StatusCode(&code).Raw()
			return raw, code, err
		}, fmt.Sprintf(`{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Success","details":{"name":"gone","group":"apps","kind":"deployments","uid":%q}}`, d.UID)},
		{"clusterrole", func() ([]byte, int, error) {
			var code int
			raw, err := ts.client.RbacV1().RESTClient().Delete().Resource("clusterroles").Name("gone").Do(ctx).StatusCode(&code).Raw()
			return raw, code, err
		}, fmt.Sprintf(`{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Success","details":{"name":"gone","group":"rbac.authorization.k8s.io","kind":"clusterroles","uid":%q}}`, cr.UID)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			raw, code, err := tc.req()
			if err != nil {
				t.Fatal(err)
			}
			if code != 200 {
				t.Errorf("code = %d, want 200", code)
			}
			var got, want any
			if err := json.Unmarshal(raw, &got); err != nil {
				t.Fatalf("%v\n%s", err, raw)
			}
			if err := json.Unmarshal([]byte(tc.want), &want); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("answer (-want +got):\n%s", diff)
			}
		})
	}
	// Deleting what is gone is NotFound.
	err = ts.client.CoreV1().ConfigMaps("default").Delete(ctx, "gone", metav1.DeleteOptions{})
	checkStatusErr(t, err, statusWant{code: 404, reason: metav1.StatusReasonNotFound, message: `configmaps "gone" not found`,
		details: &metav1.StatusDetails{Name: "gone", Kind: "configmaps"}})
}

func TestClientDeletePreconditions(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	ctx := context.Background()
	cms := ts.client.CoreV1().ConfigMaps("default")
	tests := []struct {
		name       string
		finalizer  bool
		dryRun     bool
		uid        func(real types.UID) *types.UID
		rv         func(real string) *string
		wantDetail string // "" for success; else the precondition complaint of kube-apiserver's rest.BeforeDelete
	}{
		{name: "uid matches", uid: func(u types.UID) *types.UID { return &u }},
		{name: "resourceVersion matches", rv: func(r string) *string { return &r }},
		{name: "both match", uid: func(u types.UID) *types.UID { return &u }, rv: func(r string) *string { return &r }},
		{name: "uid mismatch", uid: func(types.UID) *types.UID { return ptr.To(types.UID("wrong-uid")) },
			wantDetail: "the UID in the precondition (wrong-uid) does not match the UID in record (%[1]s). The object might have been deleted and then recreated"},
		{name: "resourceVersion mismatch", rv: func(string) *string { return ptr.To("1") },
			wantDetail: "the ResourceVersion in the precondition (1) does not match the ResourceVersion in record (%[2]s). The object might have been modified"},
		{name: "uid mismatch, dry run", dryRun: true, uid: func(types.UID) *types.UID { return ptr.To(types.UID("wrong-uid")) },
			wantDetail: "the UID in the precondition (wrong-uid) does not match the UID in record (%[1]s). The object might have been deleted and then recreated"},
		{name: "resourceVersion mismatch, dry run", dryRun: true, rv: func(string) *string { return ptr.To("1") },
			wantDetail: "the ResourceVersion in the precondition (1) does not match the ResourceVersion in record (%[2]s). The object might have been modified"},
		{name: "uid mismatch, with a finalizer", finalizer: true, uid: func(types.UID) *types.UID { return ptr.To(types.UID("wrong-uid")) },
			wantDetail: "the UID in the precondition (wrong-uid) does not match the UID in record (%[1]s). The object might have been deleted and then recreated"},
		{name: "resourceVersion mismatch, with a finalizer", finalizer: true, rv: func(string) *string { return ptr.To("1") },
			wantDetail: "the ResourceVersion in the precondition (1) does not match the ResourceVersion in record (%[2]s). The object might have been modified"},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			name := fmt.Sprintf("pre-%d", i)
			cm := newConfigMap(name, nil)
			if tc.finalizer {
				cm.Finalizers = []string{"example.com/hold"}
			}
			cur, err := cms.Create(ctx, cm, metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			opts := metav1.DeleteOptions{Preconditions: &metav1.Preconditions{}}
			if tc.uid != nil {
				opts.Preconditions.UID = tc.uid(cur.UID)
			}
			if tc.rv != nil {
				opts.Preconditions.ResourceVersion = tc.rv(cur.ResourceVersion)
			}
			if tc.dryRun {
				opts.DryRun = []string{metav1.DryRunAll}
			}
			err = cms.Delete(ctx, name, opts)
			if tc.wantDetail == "" {
				if err != nil {
					t.Fatalf("delete: %v", err)
				}
				if _, err := cms.Get(ctx, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
					t.Errorf("get after delete: %v, want NotFound", err)
				}
				return
			}
			if !apierrors.IsConflict(err) {
				t.Fatalf("delete: %v, want Conflict", err)
			}
			checkStatusErr(t, err, statusWant{code: 409, reason: metav1.StatusReasonConflict,
				prefix:  fmt.Sprintf(`Operation cannot be fulfilled on ConfigMap %q: `, name),
				details: &metav1.StatusDetails{Name: name, Kind: "ConfigMap"}})
			detail := fmt.Sprintf(tc.wantDetail, cur.UID, cur.ResourceVersion)
			if msg := err.Error(); !strings.HasSuffix(msg, detail) {
				t.Errorf("message %q\nshould end with kube-apiserver's %q", msg, detail)
			}
			after, err := cms.Get(ctx, name, metav1.GetOptions{})
			if err != nil || after.ResourceVersion != cur.ResourceVersion || after.DeletionTimestamp != nil {
				t.Errorf("after a failed delete: %v, rv %s (was %s), deletionTimestamp %v", err, after.GetResourceVersion(), cur.ResourceVersion, after.GetDeletionTimestamp())
			}
		})
	}
}

func TestClientDeleteCollection(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	ctx := context.Background()
	cms := ts.client.CoreV1().ConfigMaps("default")
	for i, team := range []string{"a", "b", "a", "c", "a"} {
		mustCreateConfigMap(t, cms, fmt.Sprintf("cm-%d", i), nil, map[string]string{"team": team})
	}
	mustCreateConfigMap(t, ts.client.CoreV1().ConfigMaps("kube-system"), "elsewhere", nil, map[string]string{"team": "a"})

	// The raw answer is the list of deleted objects.
	var code int
	raw, err := ts.client.CoreV1().RESTClient().Delete().Namespace("default").Resource("configmaps").
		Param("labelSelector", "team=a").Do(ctx).StatusCode(&code).Raw()
	if err != nil {
		t.Fatal(err)
	}
	var answer corev1.ConfigMapList
	if err := json.Unmarshal(raw, &answer); err != nil {
		t.Fatal(err)
	}
	if code != 200 || answer.Kind != "ConfigMapList" || answer.APIVersion != "v1" {
		t.Errorf("answer: code %d kind %q apiVersion %q, want 200 ConfigMapList v1", code, answer.Kind, answer.APIVersion)
	}
	if diff := cmp.Diff([]string{"cm-0", "cm-2", "cm-4"}, listNames(t, &answer)); diff != "" {
		t.Errorf("deleted (-want +got):\n%s", diff)
	}
	list, err := cms.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"cm-1", "cm-3"}, listNames(t, list)); diff != "" {
		t.Errorf("left (-want +got):\n%s", diff)
	}
	if _, err := ts.client.CoreV1().ConfigMaps("kube-system").Get(ctx, "elsewhere", metav1.GetOptions{}); err != nil {
		t.Errorf("another namespace's object: %v", err)
	}
	// With a field selector, through the typed client.
	if err := cms.DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{FieldSelector: "metadata.name=cm-3"}); err != nil {
		t.Fatal(err)
	}
	list, err = cms.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"cm-1"}, listNames(t, list)); diff != "" {
		t.Errorf("left after the field selector (-want +got):\n%s", diff)
	}
}

// ---------------------------------------------------------------------------
// Lists

func TestListPager(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	ctx := context.Background()
	cms := ts.client.CoreV1().ConfigMaps("default")
	var want []string
	for i := range 7 {
		name := fmt.Sprintf("cm-%d", i)
		mustCreateConfigMap(t, cms, name, nil, nil)
		want = append(want, name)
	}
	var calls []metav1.ListOptions
	p := pager.New(pager.SimplePageFunc(func(opts metav1.ListOptions) (runtime.Object, error) {
		calls = append(calls, opts)
		return cms.List(ctx, opts)
	}))
	p.PageSize = 2
	var got []string
	if err := p.EachListItem(ctx, metav1.ListOptions{}, func(obj runtime.Object) error {
		got = append(got, metaOf(t, obj).GetName())
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("items (-want +got):\n%s", diff)
	}
	if len(calls) != 4 {
		t.Fatalf("%d pages, want 4", len(calls))
	}
	for i, c := range calls {
		if c.Limit != 2 || (i == 0) != (c.Continue == "") {
			t.Errorf("page %d: limit %d continue %q", i, c.Limit, c.Continue)
		}
	}
	// pager.List gathers the pages into one list.
	obj, paginated, err := p.List(ctx, metav1.ListOptions{})
	if err != nil || !paginated {
		t.Fatalf("List: %v, paginated %v", err, paginated)
	}
	if diff := cmp.Diff(want, listNames(t, obj)); diff != "" {
		t.Errorf("List (-want +got):\n%s", diff)
	}
}

func TestListLimitContinue(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	ctx := context.Background()
	cms := ts.client.CoreV1().ConfigMaps("default")
	for i := range 5 {
		mustCreateConfigMap(t, cms, fmt.Sprintf("cm-%d", i), nil, map[string]string{"all": "yes"})
	}
	type page struct {
		names     []string
		more      bool
		remaining *int64
	}
	pageOf := func(l *corev1.ConfigMapList) page {
		return page{listNames(t, l), l.Continue != "", l.RemainingItemCount}
	}
	first, err := cms.List(ctx, metav1.ListOptions{Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(page{[]string{"cm-0", "cm-1"}, true, ptr.To[int64](3)}, pageOf(first), cmp.AllowUnexported(page{})); diff != "" {
		t.Errorf("page 1 (-want +got):\n%s", diff)
	}
	// Writes between pages do not show: every page is read at the first
	// page's revision.
	mustCreateConfigMap(t, cms, "cm-9", nil, nil)
	if err := cms.Delete(ctx, "cm-2", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	second, err := cms.List(ctx, metav1.ListOptions{Limit: 2, Continue: first.Continue})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(page{[]string{"cm-2", "cm-3"}, true, ptr.To[int64](1)}, pageOf(second), cmp.AllowUnexported(page{})); diff != "" {
		t.Errorf("page 2 (-want +got):\n%s", diff)
	}
	third, err := cms.List(ctx, metav1.ListOptions{Limit: 2, Continue: second.Continue})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(page{[]string{"cm-4"}, false, nil}, pageOf(third), cmp.AllowUnexported(page{})); diff != "" {
		t.Errorf("page 3 (-want +got):\n%s", diff)
	}
	for i, l := range []*corev1.ConfigMapList{second, third} {
		if l.ResourceVersion != first.ResourceVersion {
			t.Errorf("page %d resourceVersion %s, want the first page's %s", i+2, l.ResourceVersion, first.ResourceVersion)
		}
	}
	// With a selector: pages are filled, remainingItemCount is not set.
	sel, err := cms.List(ctx, metav1.ListOptions{Limit: 2, LabelSelector: "all=yes"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(page{[]string{"cm-0", "cm-1"}, true, nil}, pageOf(sel), cmp.AllowUnexported(page{})); diff != "" {
		t.Errorf("selector page 1 (-want +got):\n%s", diff)
	}
	sel2, err := cms.List(ctx, metav1.ListOptions{Limit: 2, LabelSelector: "all=yes", Continue: sel.Continue})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"cm-3", "cm-4"}, listNames(t, sel2)); diff != "" {
		t.Errorf("selector page 2 (-want +got):\n%s", diff)
	}
	// A limit larger than the list: one page, no continue.
	all, err := cms.List(ctx, metav1.ListOptions{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(page{[]string{"cm-0", "cm-1", "cm-3", "cm-4", "cm-9"}, false, nil}, pageOf(all), cmp.AllowUnexported(page{})); diff != "" {
		t.Errorf("limit 100 (-want +got):\n%s", diff)
	}
}

func TestListResourceVersionMatch(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	ctx := context.Background()
	cms := ts.client.CoreV1().ConfigMaps("default")
	v1 := mustCreateConfigMap(t, cms, "v", map[string]string{"n": "1"}, nil)
	upd := v1.DeepCopy()
	upd.Data["n"] = "2"
	v2, err := cms.Update(ctx, upd, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		opts    metav1.ListOptions
		wantN   string
		wantRV  string // exact list resourceVersion, when set
		minRV   string // else the list resourceVersion is at least this
		wantLen int
	}{
		// NotOlderThan v2 first, so that the cache is known to be there.
		{name: "NotOlderThan newest", opts: metav1.ListOptions{ResourceVersion: v2.ResourceVersion, ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan},
			wantN: "2", minRV: v2.ResourceVersion, wantLen: 1},
		{name: "NotOlderThan older", opts: metav1.ListOptions{ResourceVersion: v1.ResourceVersion, ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan},
			wantN: "2", minRV: v2.ResourceVersion, wantLen: 1},
		{name: "NotOlderThan 0", opts: metav1.ListOptions{ResourceVersion: "0", ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan},
			wantN: "2", minRV: v2.ResourceVersion, wantLen: 1},
		{name: "Exact older", opts: metav1.ListOptions{ResourceVersion: v1.ResourceVersion, ResourceVersionMatch: metav1.ResourceVersionMatchExact},
			wantN: "1", wantRV: v1.ResourceVersion, wantLen: 1},
		{name: "Exact newest", opts: metav1.ListOptions{ResourceVersion: v2.ResourceVersion, ResourceVersionMatch: metav1.ResourceVersionMatchExact},
			wantN: "2", wantRV: v2.ResourceVersion, wantLen: 1},
		{name: "Exact before the object", opts: metav1.ListOptions{ResourceVersion: strconv.FormatInt(rvInt(t, v1.ResourceVersion)-1, 10),
			ResourceVersionMatch: metav1.ResourceVersionMatchExact},
			wantRV: strconv.FormatInt(rvInt(t, v1.ResourceVersion)-1, 10), wantLen: 0},
		{name: "legacy: RV with limit is exact", opts: metav1.ListOptions{ResourceVersion: v1.ResourceVersion, Limit: 10},
			wantN: "1", wantRV: v1.ResourceVersion, wantLen: 1},
		{name: "unset", opts: metav1.ListOptions{}, wantN: "2", minRV: v2.ResourceVersion, wantLen: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			list, err := cms.List(ctx, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			if len(list.Items) != tc.wantLen {
				t.Fatalf("items %v, want %d", listNames(t, list), tc.wantLen)
			}
			if tc.wantLen == 1 && list.Items[0].Data["n"] != tc.wantN {
				t.Errorf("n = %q, want %q", list.Items[0].Data["n"], tc.wantN)
			}
			if tc.wantRV != "" && list.ResourceVersion != tc.wantRV {
				t.Errorf("list resourceVersion %s, want %s", list.ResourceVersion, tc.wantRV)
			}
			if tc.minRV != "" && rvInt(t, list.ResourceVersion) < rvInt(t, tc.minRV) {
				t.Errorf("list resourceVersion %s, want at least %s", list.ResourceVersion, tc.minRV)
			}
		})
	}
	// A get at an older resourceVersion is "not older than": the newest.
	got, err := cms.Get(ctx, "v", metav1.GetOptions{ResourceVersion: v1.ResourceVersion})
	if err != nil || got.Data["n"] != "2" {
		t.Errorf("get not older than %s: %v, n=%q", v1.ResourceVersion, err, got.Data["n"])
	}
}

// TestListErrors checks the list option errors of the resourceVersion
// table through raw requests: each answer is a Status.
func TestListErrors(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	ctx := context.Background()
	cms := ts.client.CoreV1().ConfigMaps("default")
	for i := range 3 {
		mustCreateConfigMap(t, cms, fmt.Sprintf("cm-%d", i), nil, nil)
	}
	page, err := cms.List(ctx, metav1.ListOptions{Limit: 1})
	if err != nil || page.Continue == "" {
		t.Fatalf("first page: %v, continue %q", err, page.GetContinue())
	}
	listOptions := func(causes ...metav1.StatusCause) *metav1.StatusDetails {
		return &metav1.StatusDetails{Group: "meta.k8s.io", Kind: "ListOptions", Causes: causes}
	}
	forbidden := func(field, detail string) metav1.StatusCause {
		return metav1.StatusCause{Type: metav1.CauseType("FieldValueForbidden"), Message: "Forbidden: " + detail, Field: field}
	}
	const path = "/api/v1/namespaces/default/configmaps"
	tests := []struct {
		name  string
		query string
		want  statusWant
	}{
		{"NotOlderThan without resourceVersion", "resourceVersionMatch=NotOlderThan", statusWant{
			code: 422, reason: metav1.StatusReasonInvalid,
			message: `ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided`,
			details: listOptions(forbidden("resourceVersionMatch", "resourceVersionMatch is forbidden unless resourceVersion is provided"))}},
		{"Exact without resourceVersion", "resourceVersionMatch=Exact", statusWant{
			code: 422, reason: metav1.StatusReasonInvalid,
			message: `ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided`,
			details: listOptions(forbidden("resourceVersionMatch", "resourceVersionMatch is forbidden unless resourceVersion is provided"))}},
		{"Exact at 0", "resourceVersion=0&resourceVersionMatch=Exact", statusWant{
			code: 422, reason: metav1.StatusReasonInvalid,
			message: `ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch "exact" is forbidden for resourceVersion "0"`,
			details: listOptions(forbidden("resourceVersionMatch", `resourceVersionMatch "exact" is forbidden for resourceVersion "0"`))}},
		{"unsupported match", "resourceVersion=1&resourceVersionMatch=Bogus", statusWant{
			code: 422, reason: metav1.StatusReasonInvalid,
			message: `ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Unsupported value: "Bogus": supported values: "Exact", "NotOlderThan", ""`,
			details: listOptions(metav1.StatusCause{Type: metav1.CauseTypeFieldValueNotSupported,
				Message: `Unsupported value: "Bogus": supported values: "Exact", "NotOlderThan", ""`, Field: "resourceVersionMatch"})}},
		{"match with continue", "resourceVersion=1&resourceVersionMatch=NotOlderThan&continue=" + page.Continue, statusWant{
			code: 422, reason: metav1.StatusReasonInvalid,
			message: `ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden when continue is provided`,
			details: listOptions(forbidden("resourceVersionMatch", "resourceVersionMatch is forbidden when continue is provided"))}},
		{"sendInitialEvents on a list", "sendInitialEvents=true", statusWant{
			code: 422, reason: metav1.StatusReasonInvalid,
			message: `ListOptions.meta.k8s.io "" is invalid: sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list`,
			details: listOptions(forbidden("sendInitialEvents", "sendInitialEvents is forbidden for list"))}},
		{"resourceVersion with continue", "resourceVersion=" + page.ResourceVersion + "&continue=" + page.Continue, statusWant{
			code: 400, reason: metav1.StatusReasonBadRequest,
			message: "specifying resource version is not allowed when using continue"}},
		{"malformed continue", "continue=!!!", statusWant{
			code: 400, reason: metav1.StatusReasonBadRequest,
			message: "invalid continue token: continue key is not valid: illegal base64 data at input byte 0"}},
		{"continue that is base64 of garbage", "continue=" + "Z2FyYmFnZQ", statusWant{
			code: 400, reason: metav1.StatusReasonBadRequest,
			message: "invalid continue token: continue key is not valid: invalid character 'g' looking for beginning of value"}},
		{"non-integer resourceVersion", "resourceVersion=abc", statusWant{code: 400, reason: metav1.StatusReasonBadRequest,
			message: `invalid resource version: resourceVersion: Invalid value: "abc": strconv.ParseUint: parsing "abc": invalid syntax`}},
		{"malformed label selector", "labelSelector=a+in+(", statusWant{code: 400, reason: metav1.StatusReasonBadRequest}},
		{"unsupported field selector", "fieldSelector=data.foo%3D1", statusWant{
			code: 400, reason: metav1.StatusReasonBadRequest,
			message: `"data.foo" is not a known field selector: only "metadata.name", "metadata.namespace"`}},
		{"too large resourceVersion", "resourceVersion=999999999&resourceVersionMatch=NotOlderThan", statusWant{
			code: 504, reason: metav1.StatusReasonTimeout, prefix: "Timeout: Too large resource version: 999999999, current: ",
			details: &metav1.StatusDetails{RetryAfterSeconds: 1, Causes: []metav1.StatusCause{{
				Type: metav1.CauseTypeResourceVersionTooLarge, Message: "Too large resource version"}}}}},
		{"too large resourceVersion, legacy", "resourceVersion=999999999", statusWant{
			code: 504, reason: metav1.StatusReasonTimeout, prefix: "Timeout: Too large resource version: 999999999, current: ",
			details: &metav1.StatusDetails{RetryAfterSeconds: 1, Causes: []metav1.StatusCause{{
				Type: metav1.CauseTypeResourceVersionTooLarge, Message: "Too large resource version"}}}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := rawCall(t, ts, http.MethodGet, path+"?"+tc.query, nil, nil)
			if res.code != int(tc.want.code) {
				t.Errorf("HTTP status %d, want %d", res.code, tc.want.code)
			}
			checkStatus(t, parseStatusBody(t, res.body), tc.want)
			if tc.want.code == 504 {
				if got := res.header.Values("Retry-After"); !slices.Equal(got, []string{"1"}) {
					t.Errorf("Retry-After = %q, want [1]", got)
				}
			}
		})
	}
	// The typed client sees the too-large error as a Timeout with a
	// suggested delay.
	// (client-go retries such answers up to 10 times, honouring Retry-After;
	// MaxRetries(0) keeps the test short).
	err = ts.client.CoreV1().RESTClient().Get().Namespace("default").Resource("configmaps").
		Param("resourceVersion", "999999999").Param("resourceVersionMatch", "NotOlderThan").MaxRetries(0).Do(ctx).Error()
	if !apierrors.IsTimeout(err) || !apierrors.HasStatusCause(err, metav1.CauseTypeResourceVersionTooLarge) {
		t.Errorf("typed list at a too large resourceVersion: %v, want Timeout / ResourceVersionTooLarge", err)
	}
	if d, ok := apierrors.SuggestsClientDelay(err); !ok || d != 1 {
		t.Errorf("SuggestsClientDelay = %d %v, want 1 true", d, ok)
	}
}

func TestListSelectors(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	ctx := context.Background()
	cms := ts.client.CoreV1().ConfigMaps("default")
	mustCreateConfigMap(t, cms, "a", nil, map[string]string{"team": "x", "tier": "web"})
	mustCreateConfigMap(t, cms, "b", nil, map[string]string{"team": "x"})
	mustCreateConfigMap(t, cms, "c", nil, map[string]string{"team": "y"})
	mustCreateConfigMap(t, cms, "d", nil, nil)
	tests := []struct {
		label, field string
		want         []string
	}{
		{"team=x", "", []string{"a", "b"}},
		{"team==x", "", []string{"a", "b"}},
		{"team!=x", "", []string{"c", "d"}},
		{"team in (x,y)", "", []string{"a", "b", "c"}},
		{"team notin (x)", "", []string{"c", "d"}},
		{"tier", "", []string{"a"}},
		{"!tier", "", []string{"b", "c", "d"}},
		{"team=x,tier=web", "", []string{"a"}},
		{"team=z", "", []string{}},
		{"", "metadata.name=b", []string{"b"}},
		{"", "metadata.name!=b", []string{"a", "c", "d"}},
		{"", "metadata.namespace=default", []string{"a", "b", "c", "d"}},
		{"", "metadata.namespace=other", []string{}},
		{"team=x", "metadata.name=a", []string{"a"}},
		{"team=x", "metadata.name=c", []string{}},
	}
	for _, tc := range tests {
		t.Run(tc.label+";"+tc.field, func(t *testing.T) {
			for _, limit := range []int64{0, 1} {
				var got []string
				opts := metav1.ListOptions{LabelSelector: tc.label, FieldSelector: tc.field, Limit: limit}
				for {
					list, err := cms.List(ctx, opts)
					if err != nil {
						t.Fatal(err)
					}
					got = append(got, listNames(t, list)...)
					if limit > 0 && len(list.Items) > int(limit) {
						t.Errorf("page of %d items with limit %d", len(list.Items), limit)
					}
					if list.Continue == "" {
						break
					}
					opts.Continue = list.Continue
				}
				if got == nil {
					got = []string{}
				}
				if diff := cmp.Diff(tc.want, got); diff != "" {
					t.Errorf("limit %d (-want +got):\n%s", limit, diff)
				}
			}
		})
	}
}

func TestListAllNamespaces(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	ctx := context.Background()
	if _, err := ts.client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "other"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	mustCreateConfigMap(t, ts.client.CoreV1().ConfigMaps("default"), "one", nil, map[string]string{"k": "v"})
	mustCreateConfigMap(t, ts.client.CoreV1().ConfigMaps("other"), "two", nil, map[string]string{"k": "v"})
	mustCreateConfigMap(t, ts.client.CoreV1().ConfigMaps("kube-system"), "three", nil, nil)
	nsNames := func(l *corev1.ConfigMapList) []string {
		var out []string
		for _, it := range l.Items {
			out = append(out, it.Namespace+"/"+it.Name)
		}
		return out
	}
	tests := []struct {
		opts metav1.ListOptions
		want []string
	}{
		{metav1.ListOptions{}, []string{"default/one", "kube-system/three", "other/two"}},
		{metav1.ListOptions{LabelSelector: "k=v"}, []string{"default/one", "other/two"}},
		{metav1.ListOptions{FieldSelector: "metadata.namespace=other"}, []string{"other/two"}},
		{metav1.ListOptions{Limit: 2}, []string{"default/one", "kube-system/three"}},
	}
	for _, tc := range tests {
		list, err := ts.client.CoreV1().ConfigMaps("").List(ctx, tc.opts)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tc.want, nsNames(list)); diff != "" {
			t.Errorf("%+v (-want +got):\n%s", tc.opts, diff)
		}
	}
	// The raw list: kind and apiVersion on the list, not on the items.
	res := rawCall(t, ts, http.MethodGet, "/api/v1/configmaps", nil, nil)
	var raw struct {
		Kind, APIVersion string
		Items            []map[string]any
	}
	if err := json.Unmarshal(res.body, &raw); err != nil || res.code != 200 {
		t.Fatalf("raw list: %d %v\n%s", res.code, err, res.body)
	}
	if raw.Kind != "ConfigMapList" || raw.APIVersion != "v1" || len(raw.Items) != 3 {
		t.Errorf("raw list: kind %q apiVersion %q, %d items", raw.Kind, raw.APIVersion, len(raw.Items))
	}
	for _, it := range raw.Items {
		if _, ok := it["kind"]; ok {
			t.Errorf("item carries kind: %v", it)
		}
	}
}

// ---------------------------------------------------------------------------
// Watches

func TestWatchEvents(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	ctx := context.Background()
	cms := ts.client.CoreV1().ConfigMaps("default")
	pre := mustCreateConfigMap(t, cms, "pre", nil, nil)
	w, err := cms.Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	// Without a resourceVersion the watch starts with the current state.
	ev := nextEvent(t, w, 5*time.Second)
	if got := eventString(t, ev); got != "ADDED pre" || metaOf(t, ev.Object).GetResourceVersion() != pre.ResourceVersion {
		t.Errorf("first event %s at %s, want ADDED pre at %s", got, metaOf(t, ev.Object).GetResourceVersion(), pre.ResourceVersion)
	}
	created := mustCreateConfigMap(t, cms, "w", map[string]string{"n": "1"}, nil)
	upd := created.DeepCopy()
	upd.Data["n"] = "2"
	updated, err := cms.Update(ctx, upd, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := cms.Delete(ctx, "w", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	want := []string{"ADDED w", "MODIFIED w", "DELETED w"}
	var lastRV int64
	for i, wantEv := range want {
		ev := nextEvent(t, w, 5*time.Second)
		if got := eventString(t, ev); got != wantEv {
			t.Fatalf("event %d = %s, want %s", i, got, wantEv)
		}
		cm := ev.Object.(*corev1.ConfigMap)
		rv := rvInt(t, cm.ResourceVersion)
		if rv <= lastRV {
			t.Errorf("event %d resourceVersion %d not after %d", i, rv, lastRV)
		}
		lastRV = rv
		switch i {
		case 0:
			if cm.ResourceVersion != created.ResourceVersion || cm.Data["n"] != "1" {
				t.Errorf("ADDED: rv %s n %q, want %s 1", cm.ResourceVersion, cm.Data["n"], created.ResourceVersion)
			}
		case 1:
			if cm.ResourceVersion != updated.ResourceVersion || cm.Data["n"] != "2" {
				t.Errorf("MODIFIED: rv %s n %q, want %s 2", cm.ResourceVersion, cm.Data["n"], updated.ResourceVersion)
			}
		case 2:
			if cm.Data["n"] != "2" {
				t.Errorf("DELETED carries n=%q, want the last state n=2", cm.Data["n"])
			}
		}
	}
	// A label-selected watch: leaving the selector is DELETED, entering ADDED.
	sw, err := cms.Watch(ctx, metav1.ListOptions{LabelSelector: "sel=yes", ResourceVersion: strconv.FormatInt(lastRV, 10)})
	if err != nil {
		t.Fatal(err)
	}
	defer sw.Stop()
	s := mustCreateConfigMap(t, cms, "s", nil, map[string]string{"sel": "yes"})
	s.Labels = map[string]string{"sel": "no"}
	if s, err = cms.Update(ctx, s, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	s.Labels = map[string]string{"sel": "yes"}
	if _, err = cms.Update(ctx, s, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	for i, wantEv := range []string{"ADDED s", "DELETED s", "ADDED s"} {
		if got := eventString(t, nextEvent(t, sw, 5*time.Second)); got != wantEv {
			t.Errorf("selected watch event %d = %s, want %s", i, got, wantEv)
		}
	}
}

func TestWatchFromResourceVersion(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	ctx := context.Background()
	cms := ts.client.CoreV1().ConfigMaps("default")
	a := mustCreateConfigMap(t, cms, "a", nil, nil)
	b := mustCreateConfigMap(t, cms, "b", nil, nil)
	a2 := a.DeepCopy()
	a2.Data = map[string]string{"x": "y"}
	a2, err := cms.Update(ctx, a2, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := cms.Delete(ctx, "b", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		from string
		want []string
	}{
		{a.ResourceVersion, []string{"ADDED b", "MODIFIED a", "DELETED b"}},
		{b.ResourceVersion, []string{"MODIFIED a", "DELETED b"}},
		{a2.ResourceVersion, []string{"DELETED b"}},
	}
	for _, tc := range tests {
		t.Run("from "+tc.from, func(t *testing.T) {
			w, err := cms.Watch(ctx, metav1.ListOptions{ResourceVersion: tc.from})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Stop()
			for i, want := range tc.want {
				if got := eventString(t, nextEvent(t, w, 5*time.Second)); got != want {
					t.Errorf("event %d = %s, want %s", i, got, want)
				}
			}
			// Nothing more until the next change.
			select {
			case ev := <-w.ResultChan():
				t.Errorf("unexpected event %s", eventString(t, ev))
			case <-time.After(200 * time.Millisecond):
			}
		})
	}
	// A watch from a resourceVersion the store has not reached waits for it.
	future := strconv.FormatInt(etcdRevision(t)+1, 10)
	w, err := cms.Watch(ctx, metav1.ListOptions{ResourceVersion: future})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	mustCreateConfigMap(t, cms, "c", nil, nil) // at future (or later: other tests write too)
	mustCreateConfigMap(t, cms, "d", nil, nil)
	if got := eventString(t, nextEvent(t, w, 5*time.Second)); got != "ADDED d" && got != "ADDED c" {
		t.Errorf("watch from a future resourceVersion: %s, want ADDED c or d", got)
	}
}

func TestWatchSendInitialEvents(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	ctx := context.Background()
	cms := ts.client.CoreV1().ConfigMaps("default")
	var last *corev1.ConfigMap
	for _, n := range []string{"c", "a", "b"} {
		last = mustCreateConfigMap(t, cms, n, nil, nil)
	}
	// Make sure the watch cache has seen all three (RV "0" reads it as it is).
	if _, err := cms.List(ctx, metav1.ListOptions{ResourceVersion: last.ResourceVersion,
		ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan}); err != nil {
		t.Fatal(err)
	}
	for i, rv := range []string{"", "0", last.ResourceVersion} {
		t.Run("rv="+rv, func(t *testing.T) {
			w, err := cms.Watch(ctx, metav1.ListOptions{ResourceVersion: rv, SendInitialEvents: ptr.To(true),
				ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan, AllowWatchBookmarks: true})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Stop()
			var got []string
			var bookmark watch.Event
			for range 4 {
				bookmark = nextEvent(t, w, 5*time.Second)
				got = append(got, eventString(t, bookmark))
			}
			if diff := cmp.Diff([]string{"ADDED a", "ADDED b", "ADDED c", "BOOKMARK"}, got); diff != "" {
				t.Fatalf("events (-want +got):\n%s", diff)
			}
			bm := metaOf(t, bookmark.Object)
			if bm.GetAnnotations()[metav1.InitialEventsAnnotationKey] != "true" || rvInt(t, bm.GetResourceVersion()) < rvInt(t, last.ResourceVersion) {
				t.Errorf("bookmark at %s with annotations %v, want k8s.io/initial-events-end=true not older than %s",
					bm.GetResourceVersion(), bm.GetAnnotations(), last.ResourceVersion)
			}
			// Then changes (an update, so that the next case sees the same names).
			a, err := cms.Get(ctx, "a", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			a.Data = map[string]string{"case": strconv.Itoa(i)}
			if _, err := cms.Update(ctx, a, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
			ev := nextEvent(t, w, 5*time.Second)
			if got := eventString(t, ev); got != "MODIFIED a" || ev.Object.(*corev1.ConfigMap).Data["case"] != strconv.Itoa(i) {
				t.Errorf("after the bookmark: %s %v, want MODIFIED a with case=%d", got, ev.Object, i)
			}
		})
	}
	// The bookmark itself: kind, apiVersion, resourceVersion and the annotation only.
	res := rawCall(t, ts, http.MethodGet, "/api/v1/namespaces/default/configmaps?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&timeoutSeconds=1", nil, nil)
	lines := strings.Split(strings.TrimSpace(string(res.body)), "\n")
	if res.code != 200 || len(lines) < 4 {
		t.Fatalf("raw watch: %d\n%s", res.code, res.body)
	}
	var bm struct {
		Type   string
		Object map[string]any
	}
	if err := json.Unmarshal([]byte(lines[3]), &bm); err != nil {
		t.Fatal(err)
	}
	rv, _, _ := unstructured.NestedString(bm.Object, "metadata", "resourceVersion")
	want := map[string]any{"kind": "ConfigMap", "apiVersion": "v1", "metadata": map[string]any{
		"resourceVersion": rv, "annotations": map[string]any{"k8s.io/initial-events-end": "true"}}}
	if bm.Type != "BOOKMARK" || rvInt(t, rv) < rvInt(t, last.ResourceVersion) {
		t.Errorf("fourth event %s at %s, want a BOOKMARK not older than %s", bm.Type, rv, last.ResourceVersion)
	}
	if diff := cmp.Diff(want, bm.Object); diff != "" {
		t.Errorf("bookmark object (-want +got):\n%s", diff)
	}
}

func TestWatchTimeout(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t)
	cms := ts.client.CoreV1().ConfigMaps("default")
	for _, bookmarks := range []bool{false, true} {
		t.Run(fmt.Sprintf("bookmarks=%v", bookmarks), func(t *testing.T) {
			start := time.Now()
			w, err := cms.Watch(context.Background(), metav1.ListOptions{TimeoutSeconds: ptr.To[int64](1), AllowWatchBookmarks: bookmarks})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Stop()
			var events []string
			deadline := time.After(5 * time.Second)
		loop:
			for {
				select {
				case ev, ok := <-w.ResultChan():
					if !ok {
						break loop
					}
					events = append(events, eventString(t, ev))
				case <-deadline:
					t.Fatalf("the watch did not end within 5s of its 1s timeout (events %v)", events)
				}
			}
			if d := time.Since(start); d < 900*time.Millisecond {
				t.Errorf("the watch ended after %v, before its 1s timeout", d)
			}
			for _, e := range events {
				if e != "BOOKMARK" || !bookmarks {
					t.Errorf("unexpected event %s", e)
				}
			}
		})
	}
}

// TestCompactionExpired compacts the shared etcd for real and checks the
// 410 answers: a watch from a compacted resourceVersion (an ERROR event
// carrying the Status), an exact list at it, and a continue token from
// before the compaction. It is not parallel: it compacts under every server.
func TestCompactionExpired(t *testing.T) {
	ts := newTestServer(t)
	ctx := context.Background()
	cms := ts.client.CoreV1().ConfigMaps("default")
	old := mustCreateConfigMap(t, cms, "old", map[string]string{"n": "0"}, nil)
	for i := range 3 {
		mustCreateConfigMap(t, cms, fmt.Sprintf("page-%d", i), nil, nil)
	}
	first, err := cms.List(ctx, metav1.ListOptions{Limit: 2})
	if err != nil || first.Continue == "" {
		t.Fatalf("first page: %v", err)
	}
	cur := old.DeepCopy()
	for i := 1; i <= 3; i++ {
		cur.Data["n"] = strconv.Itoa(i)
		if cur, err = cms.Update(ctx, cur, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	compacted := compactNow(t)
	t.Logf("compacted at %d; old resourceVersion %s", compacted, old.ResourceVersion)

	// An exact list at a compacted revision: 410 Expired.
	_, err = cms.List(ctx, metav1.ListOptions{ResourceVersion: old.ResourceVersion, ResourceVersionMatch: metav1.ResourceVersionMatchExact})
	checkStatusErr(t, err, statusWant{code: 410, reason: metav1.StatusReasonExpired,
		message: "The resourceVersion for the provided list is too old."})
	if !apierrors.IsResourceExpired(err) {
		t.Errorf("IsResourceExpired(%v) = false", err)
	}

	// A continue token from before: 410 with an inconsistent token that goes on.
	res := rawCall(t, ts, http.MethodGet, "/api/v1/namespaces/default/configmaps?limit=2&continue="+first.Continue, nil, nil)
	st := parseStatusBody(t, res.body)
	checkStatus(t, st, statusWant{code: 410, reason: metav1.StatusReasonExpired,
		message: "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list."})
	if res.code != 410 || st.Continue == "" {
		t.Fatalf("HTTP %d, continue %q; want 410 with an inconsistent continue token", res.code, st.Continue)
	}
	rest, err := cms.List(ctx, metav1.ListOptions{Limit: 10, Continue: st.Continue})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"page-1", "page-2"}, listNames(t, rest)); diff != "" {
		t.Errorf("inconsistent continuation (-want +got):\n%s", diff)
	}

	// A watch from a compacted revision: an ERROR event with the 410 Status,
	// then the end. The cache learns of the compaction through
	// compact_rev_key, asynchronously: retry briefly.
	eventually(t, 5*time.Second, func() string {
		w, err := cms.Watch(ctx, metav1.ListOptions{ResourceVersion: old.ResourceVersion})
		if err != nil {
			return err.Error()
		}
		defer w.Stop()
		ev := nextEvent(t, w, 5*time.Second)
		if ev.Type != watch.Error {
			return fmt.Sprintf("first event %s, want ERROR", eventString(t, ev))
		}
		st, ok := ev.Object.(*metav1.Status)
		if !ok {
			t.Fatalf("ERROR event object %T, want *metav1.Status", ev.Object)
		}
		checkStatus(t, *st, statusWant{code: 410, reason: metav1.StatusReasonExpired,
			prefix: fmt.Sprintf("too old resource version: %s (", old.ResourceVersion)})
		if !apierrors.IsResourceExpired(apierrors.FromObject(st)) {
			t.Errorf("FromObject(%v) is not ResourceExpired", st)
		}
		select {
		case ev, ok := <-w.ResultChan():
			if ok {
				t.Errorf("event after the ERROR: %s", eventString(t, ev))
			}
		case <-time.After(5 * time.Second):
			t.Error("the watch did not end after its ERROR event")
		}
		return ""
	})
	// The newest state is still readable and watchable.
	w, err := cms.Watch(ctx, metav1.ListOptions{ResourceVersion: cur.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	mustCreateConfigMap(t, cms, "after", nil, nil)
	if got := eventString(t, nextEvent(t, w, 5*time.Second)); got != "ADDED after" {
		t.Errorf("watch from the newest resourceVersion: %s, want ADDED after", got)
	}
}
