package apiserver

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestComponentStatuses: the components kube-apiserver probes, etcd
// healthy ("ok"), the controller manager and the scheduler not (none runs
// beside the test server), and kube-apiserver's 404 for another name.
func TestComponentStatuses(t *testing.T) {
	ts := newTestServer(t)
	ctx := context.Background()
	list, err := ts.client.CoreV1().ComponentStatuses().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, cs := range list.Items {
		names = append(names, cs.Name)
		if len(cs.Conditions) != 1 || cs.Conditions[0].Type != corev1.ComponentHealthy {
			t.Errorf("%s: conditions %+v", cs.Name, cs.Conditions)
			continue
		}
		healthy := cs.Conditions[0].Status == corev1.ConditionTrue
		if healthy != (cs.Name == "etcd-0") {
			t.Errorf("%s: condition %+v", cs.Name, cs.Conditions[0])
		}
	}
	if len(names) != 3 || names[0] != "controller-manager" || names[1] != "etcd-0" || names[2] != "scheduler" {
		t.Errorf("component statuses %v, want controller-manager, etcd-0, scheduler", names)
	}
	etcd, err := ts.client.CoreV1().ComponentStatuses().Get(ctx, "etcd-0", metav1.GetOptions{})
	if err != nil || etcd.Conditions[0].Message != "ok" || etcd.Conditions[0].Status != corev1.ConditionTrue {
		t.Errorf("get etcd-0: %v %+v", err, etcd)
	}
	_, err = ts.client.CoreV1().ComponentStatuses().Get(ctx, "missing", metav1.GetOptions{})
	checkStatusErr(t, err, statusWant{code: 404, reason: metav1.StatusReasonNotFound, message: `componentstatus "missing" not found`})
	_, err = ts.client.CoreV1().ComponentStatuses().Watch(ctx, metav1.ListOptions{})
	checkStatusErr(t, err, statusWant{code: 405, reason: metav1.StatusReasonMethodNotAllowed,
		message: "the server does not allow this method on the requested resource"})
}
