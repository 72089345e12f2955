package apiserver

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/util/retry"
)

// storageStub is one example object of upstream's etcd storage test
// (testdata/storagedata: k8s.io/kubernetes/test/integration/etcd/data.go,
// copied by gen.go there).
type storageStub struct {
	Group, Version, Resource, Stub string
}

// stubNamespace is where the namespaced examples are created; the
// examples' own references to their namespace are replaced by it.
const stubNamespace = "storagedata"

// stubImages replace the image variables of upstream's examples.
var stubImages = strings.NewReplacer("$namespace", stubNamespace,
	"$alternateImage", "registry.k8s.io/etcd:3.6.4-0", "$image", "registry.k8s.io/e2e-test-images/busybox:1.37.0-1")

// unservedStubs are the examples of versions strata does not serve, with
// the reason.
var unservedStubs = map[string]string{}

func readStorageStubs(t *testing.T) []storageStub {
	t.Helper()
	data, err := os.ReadFile("testdata/storagedata/stubs.json")
	if err != nil {
		t.Fatal(err)
	}
	var stubs []storageStub
	if err := json.Unmarshal(data, &stubs); err != nil {
		t.Fatal(err)
	}
	return stubs
}

// TestEveryResourceCRUD creates, reads, lists, watches, updates, patches
// (merge, strategic, JSON) and deletes upstream's example object of every
// served resource through the HTTP API, and checks that every served
// resource has an example.
func TestEveryResourceCRUD(t *testing.T) {
	ts := newTestServer(t)
	ctx := context.Background()
	nsRes := ts.dynamic.Resource(schema.GroupVersionResource{Version: "v1", Resource: "namespaces"})
	ns := &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": stubNamespace}}}
	if _, err := nsRes.Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	tested := map[schema.GroupVersionResource]bool{}
	served := ts.api.current().resources // before the example CRD adds its own
	for _, st := range readStorageStubs(t) {
		gvr := schema.GroupVersionResource{Group: st.Group, Version: st.Version, Resource: st.Resource}
		gv := gvr.GroupVersion().String()
		t.Run(gv+"/"+st.Resource, func(t *testing.T) {
			if why, ok := unservedStubs[gv+" "+st.Resource]; ok {
				t.Skip(why)
			}
			res, ok := ts.api.current().lookup(gvr)
			if !ok {
				t.Fatalf("%s is not served", gvr)
			}
			tested[gvr] = true
			var client dynamic.ResourceInterface = ts.dynamic.Resource(gvr)
			if res.kind.Namespaced {
				client = ts.dynamic.Resource(gvr).Namespace(stubNamespace)
			}
			obj := &unstructured.Unstructured{}
			if err := json.Unmarshal([]byte(stubImages.Replace(st.Stub)), &obj.Object); err != nil {
				t.Fatal(err)
			}
			obj.SetAPIVersion(gv)
			obj.SetKind(res.kind.GVK.Kind)
			crudStub(t, client, obj)
		})
	}
	for gvr, r := range served {
		// bindings: TestBinding; componentstatuses: TestComponentStatuses;
		// the reviews, never stored: review_test.go.
		notStored := gvr == schema.GroupVersionResource{Version: "v1", Resource: "bindings"} ||
			gvr == schema.GroupVersionResource{Version: "v1", Resource: "componentstatuses"}
		if !tested[gvr] && !notStored && !r.kind.IsReview() {
			t.Errorf("%s (%s) has no example object", gvr, r.kind.GVK.Kind)
		}
	}
}

// crudStub runs every verb on one example object.
func crudStub(t *testing.T, client dynamic.ResourceInterface, obj *unstructured.Unstructured) {
	ctx := context.Background()
	created, err := client.Create(ctx, obj, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	name := created.GetName()
	if name != obj.GetName() || created.GetResourceVersion() == "" || created.GetUID() == "" {
		t.Fatalf("create: name %q, resourceVersion %q, uid %q", name, created.GetResourceVersion(), created.GetUID())
	}
	// A CRD's controller writes its status meanwhile: the uid is compared.
	got, err := client.Get(ctx, name, metav1.GetOptions{})
	if err != nil || got.GetUID() != created.GetUID() {
		t.Fatalf("get: %v (uid %q, want %q)", err, got.GetUID(), created.GetUID())
	}
	list, err := client.List(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + name})
	if err != nil || len(list.Items) != 1 || list.Items[0].GetName() != name {
		t.Fatalf("list: %v (%d items)", err, len(list.Items))
	}
	w, err := client.Watch(ctx, metav1.ListOptions{ResourceVersion: created.GetResourceVersion(),
		FieldSelector: "metadata.name=" + name})
	if err != nil {
		t.Fatalf("watch: %v", err)
	}
	defer w.Stop()
	var updated *unstructured.Unstructured
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := client.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		cur.SetLabels(map[string]string{"update": "1"})
		updated, err = client.Update(ctx, cur, metav1.UpdateOptions{})
		return err
	})
	if err != nil || updated.GetLabels()["update"] != "1" {
		t.Fatalf("update: %v (labels %v)", err, updated.GetLabels())
	}
	expectEvent(t, w, watch.Modified, updated.GetResourceVersion())
	for _, p := range []struct {
		pt    types.PatchType
		body  string
		label string
	}{
		{types.MergePatchType, `{"metadata":{"labels":{"merge":"1"}}}`, "merge"},
		{types.StrategicMergePatchType, `{"metadata":{"labels":{"strategic":"1"}}}`, "strategic"},
		{types.JSONPatchType, `[{"op":"add","path":"/metadata/labels/json","value":"1"}]`, "json"},
	} {
		patched, err := client.Patch(ctx, name, p.pt, []byte(p.body), metav1.PatchOptions{})
		if err != nil || patched.GetLabels()[p.label] != "1" {
			t.Fatalf("%s patch: %v (labels %v)", p.label, err, patched.GetLabels())
		}
	}
	// Background, as kubectl sends: without options batch/v1 Jobs and
	// ReplicationControllers get the orphan finalizer (their strategies'
	// default), which only the garbage collector removes, and none runs
	// here.
	background := metav1.DeletePropagationBackground
	if err := client.Delete(ctx, name, metav1.DeleteOptions{PropagationPolicy: &background}); err != nil {
		t.Fatalf("delete: %v", err)
	}
	waitGone(t, client, name)
}

// expectEvent reads watch events up to the one at resourceVersion rv and
// checks its type (a CRD's controller writes the CRD in between).
func expectEvent(t *testing.T, w watch.Interface, want watch.EventType, rv string) {
	t.Helper()
	for {
		select {
		case ev := <-w.ResultChan():
			u, _ := ev.Object.(*unstructured.Unstructured)
			if u == nil {
				t.Fatalf("watch: event %s %v, want %s at resourceVersion %s", ev.Type, ev.Object, want, rv)
			}
			if u.GetResourceVersion() != rv {
				continue
			}
			if ev.Type != want {
				t.Fatalf("watch: event %s at resourceVersion %s, want %s", ev.Type, rv, want)
			}
			return
		case <-time.After(10 * time.Second):
			t.Fatalf("watch: no %s event at resourceVersion %s", want, rv)
		}
	}
}

// waitGone waits until get answers 404 (namespaces and CRDs go after
// their cleanup).
func waitGone(t *testing.T, client dynamic.ResourceInterface, name string) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		_, err := client.Get(context.Background(), name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("get after delete: %v, want NotFound", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
