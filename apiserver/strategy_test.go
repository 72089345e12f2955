package apiserver

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

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
