package apiserver

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestBinding binds pods to nodes as a scheduler does, through
// pods/binding (client-go's Bind) and the legacy bindings resource, as
// kube-apiserver answers: the pod gets spec.nodeName, the binding's
// annotations and the PodScheduled condition; a second binding, a stale
// precondition and a missing pod are refused with kube-apiserver's
// messages.
func TestBinding(t *testing.T) {
	ts := newTestServer(t)
	ctx := context.Background()
	pods := ts.client.CoreV1().Pods("default")
	for _, name := range []string{"a", "b"} {
		if _, err := pods.Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	bind := func(name, node string) *corev1.Binding {
		return &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{"bound-by": "test"}},
			Target: corev1.ObjectReference{Kind: "Node", Name: node}}
	}
	if err := pods.Bind(ctx, bind("a", "n1"), metav1.CreateOptions{}); err != nil {
		t.Fatalf("pods/binding: %v", err)
	}
	res := rawCall(t, ts, "POST", "/api/v1/namespaces/default/bindings", map[string]string{"Content-Type": "application/json"},
		[]byte(`{"apiVersion":"v1","kind":"Binding","metadata":{"name":"b"},"target":{"name":"n2"}}`))
	if res.code != 201 || strings.TrimSpace(string(res.body)) != `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Success","code":201}` {
		t.Errorf("POST bindings: %d %s", res.code, res.body)
	}
	for name, node := range map[string]string{"a": "n1", "b": "n2"} {
		p, err := pods.Get(ctx, name, metav1.GetOptions{})
		if err != nil || p.Spec.NodeName != node || len(p.Status.Conditions) != 1 ||
			p.Status.Conditions[0].Type != corev1.PodScheduled || p.Status.Conditions[0].Status != corev1.ConditionTrue {
			t.Errorf("pod %s after binding: %v node %q conditions %+v", name, err, p.Spec.NodeName, p.Status.Conditions)
		}
		if name == "a" && p.Annotations["bound-by"] != "test" {
			t.Errorf("pod a annotations %v, want the binding's", p.Annotations)
		}
	}
	err := pods.Bind(ctx, bind("a", "n2"), metav1.CreateOptions{})
	checkStatusErr(t, err, statusWant{code: 409, reason: metav1.StatusReasonConflict,
		message: `Operation cannot be fulfilled on pods/binding "a": pod a is already assigned to node "n1"`})
	stale := bind("b", "n3")
	stale.UID = "other"
	err = pods.Bind(ctx, stale, metav1.CreateOptions{})
	checkStatusErr(t, err, statusWant{code: 409, reason: metav1.StatusReasonConflict,
		prefix: `Operation cannot be fulfilled on pods "b": Precondition failed: UID in precondition: other, UID in object meta: `})
	err = pods.Bind(ctx, bind("missing", "n1"), metav1.CreateOptions{})
	checkStatusErr(t, err, statusWant{code: 404, reason: metav1.StatusReasonNotFound, message: `pods "missing" not found`})
}
