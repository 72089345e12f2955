package apiserver

import (
	"context"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func TestSmokeDeployment(t *testing.T) {
	ts := newTestServer(t)
	ctx := context.Background()
	labels := map[string]string{"app": "web"}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx"}}},
			},
		},
	}
	out, err := ts.client.AppsV1().Deployments("default").Create(ctx, d, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", out.Spec.Strategy)
	if out.Spec.Strategy.RollingUpdate == nil || out.Generation != 1 || out.UID == "" {
		t.Fatalf("not defaulted: %+v", out)
	}
	p, err := ts.client.AppsV1().Deployments("default").Patch(ctx, "web", types.StrategicMergePatchType,
		[]byte(`{"spec":{"template":{"spec":{"containers":[{"name":"web","image":"nginx:2"}]}}}}`), metav1.PatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Generation != 2 || p.Spec.Template.Spec.Containers[0].Image != "nginx:2" {
		t.Fatalf("patch: %+v", p)
	}
	list, err := ts.client.AppsV1().Deployments("").List(ctx, metav1.ListOptions{})
	if err != nil || len(list.Items) != 1 {
		t.Fatal(err, list)
	}
	if err := ts.client.AppsV1().Deployments("default").Delete(ctx, "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
}
