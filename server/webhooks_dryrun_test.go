package server

import (
	"fmt"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// testWebhookSideEffects: admissionregistration.k8s.io/v1 accepts only
// sideEffects None and NoneOnDryRun (kube-apiserver's validation), so
// "does not support dry run" cannot arise from a v1 configuration; a
// NoneOnDryRun webhook is called on a dry run with dryRun true.
func testWebhookSideEffects(t *testing.T, e *hookEnv) {
	const ns = "sideeffects"
	e.namespace(t, ns, nil)
	for _, class := range []admissionregistrationv1.SideEffectClass{"Some", "Unknown"} {
		h := e.webhook("some.example.com", "/allow", ns)
		h.SideEffects = &class
		cfg := &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "some"},
			Webhooks: []admissionregistrationv1.ValidatingWebhook{h}}
		_, err := e.client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(t.Context(), cfg, metav1.CreateOptions{})
		want := fmt.Sprintf(`ValidatingWebhookConfiguration.admissionregistration.k8s.io "some" is invalid: `+
			`webhooks[0].sideEffects: Unsupported value: %q: supported values: "None", "NoneOnDryRun"`, class)
		if err == nil || err.Error() != want {
			t.Errorf("sideEffects %s:\n got %v\nwant %s", class, err, want)
		}
	}
	h := e.webhook("dryrun.example.com", "/allow", ns)
	h.SideEffects = ptr.To(admissionregistrationv1.SideEffectClassNoneOnDryRun)
	e.validating(t, ns, h)
	e.hook.awaitCalled(t, "/allow", ns, e.probeConfigMap(ns, nil))
	if _, msg := e.createConfigMap(t, ns, "d", nil, true); msg != "" {
		t.Fatal(msg)
	}
	reqs := e.hook.requests("/allow", ns, "d")
	if len(reqs) != 1 || !ptr.Deref(reqs[0].DryRun, false) {
		t.Errorf("dry run: %d calls, want 1 with dryRun true", len(reqs))
	}
}
