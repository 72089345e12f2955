package apiserver

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestApplyControllerRuntime applies as controller-runtime's clients do:
// Client.Apply with an apply configuration, and Patch with the
// client.Apply patch of an unstructured object (the older form).
func TestApplyControllerRuntime(t *testing.T) {
	ts := newTestServer(t)
	ctx := t.Context()
	c, err := client.New(ts.config, client.Options{Scheme: clientgoscheme.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON([]byte(deploymentConfig(`"replicas":1,`, "nginx"))); err != nil {
		t.Fatal(err)
	}
	u.SetNamespace("default")
	if err := c.Patch(ctx, u, client.Apply, client.FieldOwner("operator")); err != nil { //nolint:staticcheck // the older form, still in use
		t.Fatal(err)
	}
	if u.GetGeneration() != 1 || len(u.GetManagedFields()) != 1 || u.GetManagedFields()[0].Manager != "operator" {
		t.Fatalf("created: generation %d, managedFields %v", u.GetGeneration(), u.GetManagedFields())
	}
	scale := appsv1ac.Deployment("web", "default").WithSpec(appsv1ac.DeploymentSpec().WithReplicas(3))
	if err := c.Apply(ctx, scale, client.FieldOwner("hpa"), client.ForceOwnership); err != nil {
		t.Fatal(err)
	}
	var d appsv1.Deployment
	if err := c.Get(ctx, types.NamespacedName{Namespace: "default", Name: "web"}, &d); err != nil {
		t.Fatal(err)
	}
	if *d.Spec.Replicas != 3 || len(d.ManagedFields) != 2 {
		t.Fatalf("after the forced apply: replicas %d, managedFields %v", *d.Spec.Replicas, d.ManagedFields)
	}
}
