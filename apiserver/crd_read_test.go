package apiserver

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/stratadev/strata/strategicpatch"
)

// TestCRDDefaultsOnRead: a default added to a CRD's schema shows in the
// objects written before it on get, list and watch, without a write (their
// resourceVersion stays), as kube-apiserver applies defaults when it reads
// from storage; a field the schema no longer has is pruned the same way.
func TestCRDDefaultsOnRead(t *testing.T) {
	ts := newTestServer(t)
	crd := createWidgetsCRD(t, ts)
	ctx := context.Background()
	w := widget("old", map[string]any{"size": int64(1), "owner": "ann"})
	created, err := widgets(ts).Create(ctx, w, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, found, _ := unstructured.NestedString(created.Object, "spec", "shape"); found {
		t.Fatal("spec.shape before the CRD has it")
	}
	// The new schema: spec.shape defaults to "round"; spec.owner is gone.
	versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
	for i := range versions {
		v := versions[i].(map[string]any)
		props := v["schema"].(map[string]any)["openAPIV3Schema"].(map[string]any)["properties"].(map[string]any)["spec"].(map[string]any)["properties"].(map[string]any)
		props["shape"] = map[string]any{"type": "string", "default": "round"}
		delete(props, "owner")
	}
	if err := unstructured.SetNestedSlice(crd.Object, versions, "spec", "versions"); err != nil {
		t.Fatal(err)
	}
	if _, err := ts.dynamic.Resource(gvrCRDs).Update(ctx, crd, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	var got *unstructured.Unstructured
	eventually(t, 5*time.Second, func() string {
		if got, err = widgets(ts).Get(ctx, "old", metav1.GetOptions{}); err != nil {
			return err.Error()
		}
		if shape, _, _ := unstructured.NestedString(got.Object, "spec", "shape"); shape != "round" {
			return "spec.shape is " + shape
		}
		return ""
	})
	want := map[string]any{"size": int64(1), "color": "red", "shape": "round"}
	if diff := cmp.Diff(want, got.Object["spec"]); diff != "" {
		t.Errorf("spec read after the CRD change (-want +got):\n%s", diff)
	}
	if got.GetResourceVersion() != created.GetResourceVersion() {
		t.Errorf("resourceVersion %s, want %s: reading must not write", got.GetResourceVersion(), created.GetResourceVersion())
	}
	list, err := widgets(ts).List(ctx, metav1.ListOptions{})
	if err != nil || len(list.Items) != 1 {
		t.Fatalf("list: %v, %v", list, err)
	}
	if diff := cmp.Diff(want, list.Items[0].Object["spec"]); diff != "" {
		t.Errorf("listed spec (-want +got):\n%s", diff)
	}
	wch, err := widgets(ts).Watch(ctx, metav1.ListOptions{ResourceVersion: "0"})
	if err != nil {
		t.Fatal(err)
	}
	defer wch.Stop()
	ev := <-wch.ResultChan()
	if diff := cmp.Diff(want, ev.Object.(*unstructured.Unstructured).Object["spec"]); diff != "" {
		t.Errorf("watched spec (-want +got):\n%s", diff)
	}
}

// TestCRDStrategicPatchMetadata: a custom resource's metadata follows
// ObjectMeta in a strategic merge patch (labels merge, finalizers merge as
// a set) although the CRD's schema does not list metadata, in both
// --patch-compat modes; kubectl apply of a custom resource sends such a
// patch.
func TestCRDStrategicPatchMetadata(t *testing.T) {
	for _, tt := range []struct {
		name           string
		compat         strategicpatch.Compat
		wantFinalizers []string
	}{
		{"strata", strategicpatch.Strata, []string{"example.com/a", "example.com/b"}},
		// apimachinery puts the patch's items first.
		{"kubernetes", strategicpatch.Kubernetes, []string{"example.com/b", "example.com/a"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			compat := tt.compat
			ts := newTestServer(t, func(c *Config) { c.PatchCompat = compat })
			createWidgetsCRD(t, ts)
			ctx := context.Background()
			w := widget("m", map[string]any{"size": int64(1)})
			w.SetLabels(map[string]string{"app": "web"})
			w.SetFinalizers([]string{"example.com/a"})
			if _, err := widgets(ts).Create(ctx, w, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			patch := `{"metadata":{"labels":{"tier":"front"},"finalizers":["example.com/b"]},"spec":{"size":2}}`
			out, err := widgets(ts).Patch(ctx, "m", types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(map[string]string{"app": "web", "tier": "front"}, out.GetLabels()); diff != "" {
				t.Errorf("labels (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantFinalizers, out.GetFinalizers()); diff != "" {
				t.Errorf("finalizers (-want +got):\n%s", diff)
			}
			if size, _, _ := unstructured.NestedInt64(out.Object, "spec", "size"); size != 2 {
				t.Errorf("spec.size %d, want 2", size)
			}
			out.SetFinalizers(nil)
			if _, err := widgets(ts).Update(ctx, out, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
		})
	}
}
