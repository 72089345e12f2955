package apiserver

import (
	"context"
	"testing"
	"time"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"
)

// TestHPAVersionsShareObjects: an HPA written in autoscaling/v2 is read,
// updated and watched in autoscaling/v1 and back, converted by the
// scheme as kube-apiserver converts it (v1's targetCPUUtilizationPercentage
// is v2's CPU utilization metric).
func TestHPAVersionsShareObjects(t *testing.T) {
	ts := newTestServer(t)
	ctx := context.Background()
	v2 := ts.client.AutoscalingV2().HorizontalPodAutoscalers("default")
	v1 := ts.client.AutoscalingV1().HorizontalPodAutoscalers("default")
	created, err := v2.Create(ctx, &autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{MaxReplicas: 5,
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"},
			Metrics: []autoscalingv2.MetricSpec{{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{
				Name: corev1.ResourceCPU, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr.To[int32](70)}}}},
		}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w, err := v1.Watch(ctx, metav1.ListOptions{ResourceVersion: created.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	old, err := v1.Get(ctx, "web", metav1.GetOptions{})
	if err != nil || old.UID != created.UID || old.ResourceVersion != created.ResourceVersion ||
		ptr.Deref(old.Spec.TargetCPUUtilizationPercentage, 0) != 70 || old.Spec.MaxReplicas != 5 {
		t.Fatalf("v1 get: %v %+v", err, old)
	}
	old.Spec.TargetCPUUtilizationPercentage = ptr.To[int32](50)
	updated, err := v1.Update(ctx, old, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case ev := <-w.ResultChan():
		got, _ := ev.Object.(*autoscalingv1.HorizontalPodAutoscaler)
		if ev.Type != watch.Modified || got == nil || got.ResourceVersion != updated.ResourceVersion {
			t.Errorf("v1 watch: %s %v", ev.Type, ev.Object)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("v1 watch: no event")
	}
	now, err := v2.Get(ctx, "web", metav1.GetOptions{})
	if err != nil || len(now.Spec.Metrics) != 1 || *now.Spec.Metrics[0].Resource.Target.AverageUtilization != 50 {
		t.Fatalf("v2 get after the v1 update: %v %+v", err, now.Spec.Metrics)
	}
}

// TestEventsGroupsShareObjects: a core Event is an events.k8s.io Event and
// the other way round, as in kube-apiserver.
func TestEventsGroupsShareObjects(t *testing.T) {
	ts := newTestServer(t)
	ctx := context.Background()
	_, err := ts.client.CoreV1().Events("default").Create(ctx, &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: "core"},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Name: "p", Namespace: "default"},
		Reason:         "Started", Message: "m", Type: "Normal", Source: corev1.EventSource{Component: "kubelet"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = ts.client.EventsV1().Events("default").Create(ctx, &eventsv1.Event{ObjectMeta: metav1.ObjectMeta{Name: "new"},
		EventTime: metav1.NewMicroTime(time.Now()), ReportingController: "example.com/c", ReportingInstance: "i",
		Action: "Scale", Reason: "Scaled", Type: "Normal", Regarding: corev1.ObjectReference{Kind: "Deployment", Name: "web", Namespace: "default"}},
		metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := ts.client.EventsV1().Events("default").Get(ctx, "core", metav1.GetOptions{})
	if err != nil || got.Regarding.Name != "p" || got.DeprecatedSource.Component != "kubelet" {
		t.Errorf("events.k8s.io get of a core event: %v %+v", err, got)
	}
	core, err := ts.client.CoreV1().Events("default").List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.kind=Deployment"})
	if err != nil || len(core.Items) != 1 || core.Items[0].Name != "new" || core.Items[0].ReportingController != "example.com/c" {
		t.Errorf("core list of the events.k8s.io event: %v %+v", err, core)
	}
}
