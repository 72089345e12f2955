package apiserver

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

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
