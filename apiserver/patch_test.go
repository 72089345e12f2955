package apiserver

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

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
