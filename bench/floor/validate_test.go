package floor

import (
	"context"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/stratadev/strata/bench/internal/layout"
)

// TestValidated checks that the write floors store objects as
// kube-apiserver's store does: what it refuses they refuse, with its
// messages, and what it stores they store defaulted, with the strategy's
// changes, in the external version.
func TestValidated(t *testing.T) {
	cm := func(name string, immutable bool, data map[string]string) *corev1.ConfigMap {
		c := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: layout.Namespace, ResourceVersion: "7"}, Data: data}
		if immutable {
			c.Immutable = &immutable
		}
		return c
	}
	dep := func(selector, labels string) *appsv1.Deployment {
		return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: layout.Namespace, ResourceVersion: "7"},
			Spec: appsv1.DeploymentSpec{
				Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": selector}},
				Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": labels}},
					Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx"}}}}}}
	}
	tests := []struct {
		name     string
		kind     floorKind
		obj, old runtime.Object // old nil: a create
		wantErr  string         // "": stored
		// want are fields of what is stored (path joined by dots: value).
		want map[string]any
	}{
		{"ConfigMap create", configMaps, cm("a", false, map[string]string{"k": "v"}), nil, "",
			map[string]any{"metadata.name": "a", "metadata.namespace": layout.Namespace, "data.k": "v"}},
		{"ConfigMap create with an invalid key", configMaps, cm("a", false, map[string]string{"bad key": "v"}), nil,
			`ConfigMap "a" is invalid: data[bad key]: Invalid value: "bad key": a valid config key must consist of alphanumeric characters`, nil},
		{"ConfigMap create with an invalid name", configMaps, cm("A_b", false, nil), nil,
			`ConfigMap "A_b" is invalid: metadata.name: Invalid value: "A_b"`, nil},
		{"ConfigMap update", configMaps, cm("a", false, map[string]string{"k": "w"}), cm("a", false, map[string]string{"k": "v"}), "",
			map[string]any{"metadata.name": "a", "data.k": "w"}},
		{"ConfigMap update of an immutable one's data", configMaps, cm("a", true, map[string]string{"k": "w"}),
			cm("a", true, map[string]string{"k": "v"}),
			`ConfigMap "a" is invalid: data: Forbidden: field is immutable when ` + "`immutable`" + ` is set`, nil},
		{"Deployment create", deployments, dep("web", "web"), nil, "",
			map[string]any{"metadata.generation": int64(1), "spec.revisionHistoryLimit": int64(10), "spec.strategy.type": "RollingUpdate"}},
		{"Deployment create with a selector its template does not match", deployments, dep("web", "other"), nil,
			`Deployment.apps "web" is invalid: spec.template.metadata.labels: Invalid value: `, nil},
		{"Deployment update of its selector", deployments, dep("new", "new"), dep("web", "web"),
			`Deployment.apps "web" is invalid: spec.selector: Invalid value: `, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, err := validated(context.Background(), tc.kind, layout.Namespace, tc.obj, tc.old)
			if tc.wantErr != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one starting %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got unstructured.Unstructured
			if err := got.UnmarshalJSON(out); err != nil {
				t.Fatal(err)
			}
			if tc.old == nil && got.GetUID() == "" {
				t.Errorf("created %s without the uid rest.BeforeCreate sets", out)
			}
			if got.GetResourceVersion() != "" {
				t.Errorf("stored %s with a resourceVersion", out)
			}
			for path, want := range tc.want {
				if v, ok, _ := unstructured.NestedFieldNoCopy(got.Object, strings.Split(path, ".")...); !ok || v != want {
					t.Errorf("stored %s: %s is %v (%T), want %v", out, path, v, v, want)
				}
			}
		})
	}
}
