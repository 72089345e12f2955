package apiserver

import (
	"context"
	"fmt"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

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
