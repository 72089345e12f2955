package server

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// testWebhookMutation: a mutating webhook's JSONPatch is applied to the
// stored object, and a validating webhook after it sees the result.
func testWebhookMutation(t *testing.T, e *hookEnv) {
	const ns = "mutation"
	e.namespace(t, ns, nil)
	e.mutating(t, ns, admissionregistrationv1.NeverReinvocationPolicy, e.webhook("patch.example.com", "/patch", ns))
	e.validating(t, ns, e.webhook("after.example.com", "/allow", ns))
	e.hook.awaitCalled(t, "/patch", ns, func(name string) { _, _ = e.createConfigMap(t, ns, name, nil, false) })
	e.hook.awaitCalled(t, "/allow", ns, func(name string) { _, _ = e.createConfigMap(t, ns, name, nil, false) })
	got, msg := e.createConfigMap(t, ns, "m", map[string]string{"app": "x"}, false)
	if msg != "" {
		t.Fatal(msg)
	}
	type view struct {
		Labels, Annotations, Data map[string]string
	}
	want := view{Labels: map[string]string{"app": "x"}, Annotations: map[string]string{"hook.example.com/patched": "yes"},
		Data: map[string]string{"k": "patched"}}
	if diff := cmp.Diff(want, view{got.Labels, got.Annotations, got.Data}); diff != "" {
		t.Errorf("created object (-want +got):\n%s", diff)
	}
	reqs := e.hook.requests("/allow", ns, "m")
	if len(reqs) != 1 {
		t.Fatalf("validating webhook called %d times, want 1", len(reqs))
	}
	var seen corev1.ConfigMap
	if err := json.Unmarshal(reqs[0].Object.Raw, &seen); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, view{seen.Labels, seen.Annotations, seen.Data}); diff != "" {
		t.Errorf("object the validating webhook saw (-want +got):\n%s", diff)
	}
}

// testWebhookReinvocation: a mutating webhook with reinvocationPolicy
// IfNeeded is called again when a later webhook changes the object; one
// with Never is not.
func testWebhookReinvocation(t *testing.T, e *hookEnv) {
	const ns = "reinvocation"
	e.namespace(t, ns, nil)
	// Configurations run in the order of their names.
	e.mutating(t, ns+"-1", admissionregistrationv1.IfNeededReinvocationPolicy, e.webhook("a.example.com", "/label/a", ns))
	e.mutating(t, ns+"-2", admissionregistrationv1.NeverReinvocationPolicy, e.webhook("b.example.com", "/label/b", ns))
	e.mutating(t, ns+"-3", admissionregistrationv1.NeverReinvocationPolicy, e.webhook("c.example.com", "/label/c", ns))
	for _, path := range []string{"/label/a", "/label/b", "/label/c"} {
		e.hook.awaitCalled(t, path, ns, e.probeConfigMap(ns, nil))
	}
	got, msg := e.createConfigMap(t, ns, "r", nil, false)
	if msg != "" {
		t.Fatal(msg)
	}
	if diff := cmp.Diff(map[string]string{"a": "yes", "b": "yes", "c": "yes"}, got.Labels); diff != "" {
		t.Errorf("labels (-want +got):\n%s", diff)
	}
	calls := map[string]int{}
	for _, path := range []string{"/label/a", "/label/b", "/label/c"} {
		calls[path] = len(e.hook.requests(path, ns, "r"))
	}
	if diff := cmp.Diff(map[string]int{"/label/a": 2, "/label/b": 1, "/label/c": 1}, calls); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
}

// testWebhookAfterPlugins: mutating webhooks run after kube-apiserver's
// built-in mutating plugins (ServiceAccount, DefaultTolerationSeconds),
// so a webhook on pods sees their work.
func testWebhookAfterPlugins(t *testing.T, e *hookEnv) {
	const ns = "plugins"
	e.namespace(t, ns, nil)
	waitFor(t, "the default ServiceAccount", func() (bool, error) {
		_, err := e.client.CoreV1().ServiceAccounts(ns).Get(t.Context(), "default", metav1.GetOptions{})
		return err == nil, err
	})
	h := e.webhook("pods.example.com", "/allow", ns)
	h.Rules[0].Rule.Resources = []string{"pods"}
	e.mutating(t, ns, admissionregistrationv1.NeverReinvocationPolicy, h)
	e.hook.awaitCalled(t, "/allow", ns, func(name string) {
		_, _ = e.client.CoreV1().Pods(ns).Create(context.Background(), plainPod(name), metav1.CreateOptions{})
	})
	var reqs []*admissionv1.AdmissionRequest
	for i := 1; len(reqs) == 0 && i <= 1000; i++ {
		reqs = e.hook.requests("/allow", ns, fmt.Sprintf("probe-%d", i))
	}
	if len(reqs) == 0 {
		t.Fatal("no review of a probe")
	}
	var pod corev1.Pod
	if err := json.Unmarshal(reqs[0].Object.Raw, &pod); err != nil {
		t.Fatal(err)
	}
	got := fmt.Sprintf("serviceAccountName %q, %d volumes, %d tolerations", pod.Spec.ServiceAccountName,
		len(pod.Spec.Volumes), len(pod.Spec.Tolerations))
	if want := `serviceAccountName "default", 1 volumes, 2 tolerations`; got != want {
		t.Errorf("the pod the webhook saw: %s, want %s", got, want)
	}
}
