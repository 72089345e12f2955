package apiserver

import (
	"context"
	"encoding/json"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	autoscalingv1ac "k8s.io/client-go/applyconfigurations/autoscaling/v1"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// scaleApplyCase is one scalable resource: its collection path and an
// applied configuration of an object "test" with one replica.
type scaleApplyCase struct {
	name, path, object string
	// replicas is the path of the replicas in the object.
	replicas []string
}

var scaleApplyCases = []scaleApplyCase{
	{"deployments", "/apis/apps/v1/namespaces/default/deployments", `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"test"},` +
		`"spec":{"replicas":1,"selector":{"matchLabels":{"app":"nginx"}},"template":{"metadata":{"labels":{"app":"nginx"}},"spec":{"containers":[{"name":"nginx","image":"nginx:latest"}]}}}}`,
		[]string{"spec", "replicas"}},
	{"replicationcontrollers", "/api/v1/namespaces/default/replicationcontrollers", `{"apiVersion":"v1","kind":"ReplicationController","metadata":{"name":"test"},` +
		`"spec":{"replicas":1,"selector":{"app":"nginx"},"template":{"metadata":{"labels":{"app":"nginx"}},"spec":{"containers":[{"name":"nginx","image":"nginx:latest"}]}}}}`,
		[]string{"spec", "replicas"}},
	{"widgets (custom)", "/apis/example.com/v1/namespaces/default/widgets", `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"test"},"spec":{"size":1}}`,
		[]string{"spec", "size"}},
}

// TestScaleApply: server-side apply of the scale subresource, as
// kube-apiserver's integration test TestScaleAllResources drives it:
// applying a Scale conflicts with the manager that applied the replicas,
// forcing takes them over, a PUT of the Scale takes them, applying the
// same value co-owns them, and a merge patch takes them alone. The
// conflict is kube-apiserver's Status; the owners are read from the
// object's managedFields.
func TestScaleApply(t *testing.T) {
	ts := newTestServer(t)
	createWidgetsCRD(t, ts)
	for _, tc := range scaleApplyCases {
		t.Run(tc.name, func(t *testing.T) {
			obj := tc.path + "/test"
			call := func(method, path, contentType, body string, want int) []byte {
				t.Helper()
				res := rawCall(t, ts, method, path, map[string]string{"Content-Type": contentType}, []byte(body))
				if res.code != want {
					t.Fatalf("%s %s: %d, want %d: %s", method, path, res.code, want, res.body)
				}
				return res.body
			}
			scale := func(n string) string {
				return `{"kind":"Scale","apiVersion":"autoscaling/v1","metadata":{"name":"test","namespace":"default"},"spec":{"replicas":` + n + `}}`
			}
			const apply = "application/apply-patch+yaml"
			call("PATCH", obj+"?fieldManager=apply_test", apply, tc.object, http.StatusCreated)
			tc.checkReplicas(t, ts, 1, "apply_test")
			call("PATCH", obj+"/scale?fieldManager=scale_test", "application/merge-patch+json", `{"spec":{"replicas":5}}`, http.StatusOK)
			tc.checkReplicas(t, ts, 5, "scale_test")
			call("PATCH", obj+"?fieldManager=apply_test", apply, tc.object, http.StatusConflict)
			call("PATCH", obj+"?fieldManager=apply_test&force=true", apply, tc.object, http.StatusOK)
			tc.checkReplicas(t, ts, 1, "apply_test")

			conflict := call("PATCH", obj+"/scale?fieldManager=apply_scale", apply, scale("9"), http.StatusConflict)
			checkStatus(t, parseStatusBody(t, conflict), statusWant{code: 409, reason: metav1.StatusReasonConflict,
				message: `Apply failed with 1 conflict: conflict with "apply_test": .spec.replicas`,
				details: &metav1.StatusDetails{Causes: []metav1.StatusCause{{Type: metav1.CauseTypeFieldManagerConflict,
					Message: `conflict with "apply_test"`, Field: ".spec.replicas"}}}})
			answer := call("PATCH", obj+"/scale?fieldManager=apply_scale&force=true", apply, scale("9"), http.StatusOK)
			var sc struct {
				Kind, APIVersion string
				Spec             struct{ Replicas int }
			}
			if err := json.Unmarshal(answer, &sc); err != nil || sc.Kind != "Scale" || sc.APIVersion != "autoscaling/v1" || sc.Spec.Replicas != 9 {
				t.Errorf("forced apply answered %s (%v), want a Scale of 9", answer, err)
			}
			tc.checkReplicas(t, ts, 9, "apply_scale")

			call("PUT", obj+"/scale?fieldManager=replace_test", "application/json", scale("7"), http.StatusOK)
			tc.checkReplicas(t, ts, 7, "replace_test")
			call("PATCH", obj+"/scale?fieldManager=co_owning_test", apply, scale("7"), http.StatusOK)
			tc.checkReplicas(t, ts, 7, "replace_test", "co_owning_test")
			call("PATCH", obj+"/scale?fieldManager=scale_test", "application/merge-patch+json", `{"spec":{"replicas":5}}`, http.StatusOK)
			tc.checkReplicas(t, ts, 5, "scale_test")
		})
	}
}

// checkReplicas checks the object's replicas and that exactly owners own
// them in its managedFields, in any order (kube-apiserver's
// assertReplicasOwnership).
func (tc scaleApplyCase) checkReplicas(t *testing.T, ts *testServer, want int64, owners ...string) {
	t.Helper()
	res := rawCall(t, ts, "GET", tc.path+"/test", nil, nil)
	var obj map[string]any
	if err := json.Unmarshal(res.body, &obj); err != nil {
		t.Fatal(err)
	}
	field := obj
	for _, name := range tc.replicas[:len(tc.replicas)-1] {
		field, _ = field[name].(map[string]any)
	}
	if got := field[tc.replicas[len(tc.replicas)-1]]; got != float64(want) {
		t.Errorf("replicas %v, want %d", got, want)
	}
	var entries []metav1.ManagedFieldsEntry
	raw, _ := json.Marshal(obj["metadata"].(map[string]any)["managedFields"])
	if err := json.Unmarshal(raw, &entries); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		var fields map[string]any
		if err := json.Unmarshal(e.FieldsV1.Raw, &fields); err != nil {
			t.Fatal(err)
		}
		for _, name := range tc.replicas[:len(tc.replicas)-1] {
			fields, _ = fields["f:"+name].(map[string]any)
		}
		if _, ok := fields["f:"+tc.replicas[len(tc.replicas)-1]]; ok {
			got = append(got, e.Manager)
		}
	}
	slices.Sort(got)
	owners = slices.Sorted(slices.Values(owners))
	if !reflect.DeepEqual(got, owners) {
		t.Errorf("replicas owned by %v, want %v", got, owners)
	}
}

// TestScaleApplyControllerRuntime: controller-runtime's
// SubResource("scale").Apply, typed and unstructured, scales a Deployment
// (its own test of the scale subresource, run against strata).
func TestScaleApplyControllerRuntime(t *testing.T) {
	ts := newTestServer(t)
	ctx := context.Background()
	deps := ts.client.AppsV1().Deployments("default")
	typed, err := client.New(ts.config, client.Options{Scheme: clientgoscheme.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	untyped, err := client.New(ts.config, client.Options{Scheme: runtime.NewScheme()})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		apply func(dep *appsv1.Deployment, replicas int32) error
	}{
		{"typed", func(dep *appsv1.Deployment, replicas int32) error {
			ac, err := appsv1ac.ExtractDeployment(dep, "foo")
			if err != nil {
				return err
			}
			scale := autoscalingv1ac.Scale().WithSpec(autoscalingv1ac.ScaleSpec().WithReplicas(replicas))
			return typed.SubResource("scale").Apply(ctx, ac, &client.SubResourceApplyOptions{SubResourceBody: scale},
				client.FieldOwner("foo"), client.ForceOwnership)
		}},
		{"unstructured", func(dep *appsv1.Deployment, replicas int32) error {
			dep.APIVersion, dep.Kind = "apps/v1", "Deployment"
			content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(dep)
			if err != nil {
				return err
			}
			scale := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "autoscaling/v1", "kind": "Scale",
				"spec": map[string]any{"replicas": int64(replicas)}}}
			return untyped.SubResource("scale").Apply(ctx, client.ApplyConfigurationFromUnstructured(&unstructured.Unstructured{Object: content}),
				&client.SubResourceApplyOptions{SubResourceBody: client.ApplyConfigurationFromUnstructured(scale)},
				client.FieldOwner("foo"), client.ForceOwnership)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var dep appsv1.Deployment
			if err := json.Unmarshal([]byte(strings.Replace(scaleApplyCases[0].object, `"test"`, `"`+tc.name+`"`, 1)), &dep); err != nil {
				t.Fatal(err)
			}
			created, err := deps.Create(ctx, &dep, metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if err := tc.apply(created, 3); err != nil {
				t.Fatalf("apply of the scale subresource: %v", err)
			}
			got, err := deps.Get(ctx, tc.name, metav1.GetOptions{})
			if err != nil || *got.Spec.Replicas != 3 {
				t.Errorf("after applying the scale: %v, replicas %v, want 3", err, got.Spec.Replicas)
			}
		})
	}
}
