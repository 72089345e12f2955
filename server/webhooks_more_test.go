package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/dynamic"
	"k8s.io/utils/ptr"

	"github.com/stratadev/strata/internal/loopdial"
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

// testWebhookNamespaceSelector: a webhook whose namespaceSelector names a
// label applies in the namespaces that have it, not in the others.
func testWebhookNamespaceSelector(t *testing.T, e *hookEnv) {
	e.namespace(t, "selected", map[string]string{"webhooks": "deny"})
	e.namespace(t, "unselected", map[string]string{"webhooks": "allow"})
	h := e.webhook("nsselector.example.com", "/deny", "")
	h.NamespaceSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"webhooks": "deny"}}
	e.validating(t, "nsselector", h)
	e.hook.awaitCalled(t, "/deny", "selected", e.probeConfigMap("selected", nil))
	want := `admission webhook "nsselector.example.com" denied the request: no thanks`
	if _, got := e.createConfigMap(t, "selected", "s", nil, false); got != want {
		t.Errorf("in selected: got %q, want %q", got, want)
	}
	if _, got := e.createConfigMap(t, "unselected", "s", nil, false); got != "" {
		t.Errorf("in unselected: %s", got)
	}
}

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

// testWebhookCustomResource: webhooks on a custom resource: a mutating
// one's patch is applied to the custom object, a validating one refuses a
// create and receives the custom kind and resource.
func testWebhookCustomResource(t *testing.T, e *hookEnv) {
	const ns = "custom"
	e.namespace(t, ns, nil)
	crds := dynamic.NewForConfigOrDie(e.admin).Resource(schema.GroupVersionResource{Group: "apiextensions.k8s.io",
		Version: "v1", Resource: "customresourcedefinitions"})
	if _, err := crds.Create(t.Context(), gadgetsCRD("hookgadgets"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	gadgets := dynamic.NewForConfigOrDie(e.admin).Resource(schema.GroupVersionResource{Group: "example.com",
		Version: "v1", Resource: "hookgadgets"}).Namespace(ns)
	h := e.webhook("gadgets.example.com", "/deny", ns)
	h.Rules[0].Rule = admissionregistrationv1.Rule{APIGroups: []string{"example.com"}, APIVersions: []string{"v1"},
		Resources: []string{"hookgadgets"}}
	h.MatchConditions = []admissionregistrationv1.MatchCondition{{Name: "not-kept",
		Expression: "!object.metadata.name.startsWith('keep')"}}
	e.validating(t, ns, h)
	m := e.webhook("gadget-labels.example.com", "/label/m", ns)
	m.Rules = h.Rules
	e.mutating(t, ns, admissionregistrationv1.NeverReinvocationPolicy, m)
	create := func(name string) error {
		_, err := gadgets.Create(context.Background(), object("example.com/v1", "Hookgadget", ns, name, nil), metav1.CreateOptions{})
		return err
	}
	e.hook.awaitCalled(t, "/deny", ns, func(name string) { _ = create(name) })
	e.hook.awaitCalled(t, "/label/m", ns, func(name string) { _ = create(name) })
	kept, err := gadgets.Create(t.Context(), object("example.com/v1", "Hookgadget", ns, "keep", map[string]any{"spec": "x"}), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{"m": "yes"}, kept.GetLabels()); diff != "" {
		t.Errorf("labels of the kept gadget (-want +got):\n%s", diff)
	}
	if spec := kept.Object["spec"]; spec != "x" {
		t.Errorf("spec of the kept gadget: %v, want x", spec)
	}
	want := `admission webhook "gadgets.example.com" denied the request: no thanks`
	if err := create("g"); err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
	reqs := e.hook.requests("/deny", ns, "g")
	if len(reqs) != 1 {
		t.Fatalf("webhook called %d times, want 1", len(reqs))
	}
	got := reviewSummary(reqs[0])
	wantReview := reviewFields{UIDSet: true, Kind: metav1.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Hookgadget"},
		Resource:  metav1.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "hookgadgets"},
		Namespace: ns, Name: "g", Operation: "CREATE", Username: e.adminName, Groups: adminGroups, OptionsKind: "CreateOptions", Object: true}
	if diff := cmp.Diff(wantReview, got); diff != "" {
		t.Errorf("review (-want +got):\n%s", diff)
	}
}

// testWebhookService: a webhook's service reference is resolved through
// the Service's EndpointSlice to the webhook server (an EndpointSlice may
// not name a loopback address: it names loopdial.EndpointIP, which the
// server dials on 127.0.0.1), and called
// by the Service's DNS name.
func testWebhookService(t *testing.T, e *hookEnv) {
	hook := startHookServer(t, net.IPv4(127, 0, 0, 1))
	const ns = "webhooks" // hookServerName's namespace
	e.namespace(t, ns, nil)
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "hook"}, Spec: corev1.ServiceSpec{
		Ports: []corev1.ServicePort{{Name: "https", Port: 443, TargetPort: intstr.FromInt32(hook.port())}}}}
	if _, err := e.client.CoreV1().Services(ns).Create(t.Context(), svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	slice := &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: "hook-1", Labels: map[string]string{discoveryv1.LabelServiceName: "hook"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints: []discoveryv1.Endpoint{{Addresses: []string{loopdial.EndpointIP},
			Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}}},
		Ports: []discoveryv1.EndpointPort{{Name: ptr.To("https"), Port: ptr.To(hook.port()), Protocol: ptr.To(corev1.ProtocolTCP)}},
	}
	if _, err := e.client.DiscoveryV1().EndpointSlices(ns).Create(t.Context(), slice, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	h := e.webhook("service.example.com", "", ns)
	h.ClientConfig = admissionregistrationv1.WebhookClientConfig{CABundle: hook.caPEM,
		Service: &admissionregistrationv1.ServiceReference{Namespace: ns, Name: "hook", Path: ptr.To("/deny"), Port: ptr.To[int32](443)}}
	e.validating(t, ns, h)
	hook.awaitCalled(t, "/deny", ns, e.probeConfigMap(ns, nil))
	want := `admission webhook "service.example.com" denied the request: no thanks`
	if _, got := e.createConfigMap(t, ns, "s", nil, false); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// testWebhookMatchPolicy: a webhook for autoscaling/v2 HPAs is called for
// a create through autoscaling/v1 with matchPolicy Equivalent (the object
// converted to v2), and not with Exact.
func testWebhookMatchPolicy(t *testing.T, e *hookEnv) {
	for _, policy := range []admissionregistrationv1.MatchPolicyType{admissionregistrationv1.Equivalent, admissionregistrationv1.Exact} {
		ns := "matchpolicy-" + strings.ToLower(string(policy))
		e.namespace(t, ns, nil)
		h := e.webhook("hpa.example.com", "/deny", ns)
		h.Rules[0].Rule = admissionregistrationv1.Rule{APIGroups: []string{"autoscaling"}, APIVersions: []string{"v2"},
			Resources: []string{"horizontalpodautoscalers"}}
		h.MatchPolicy = &policy
		// The probes are ConfigMaps, which only the second webhook matches.
		e.validating(t, ns, h, e.webhook("probe.example.com", "/allow", ns))
		e.hook.awaitCalled(t, "/allow", ns, e.probeConfigMap(ns, nil))
		hpas := dynamic.NewForConfigOrDie(e.admin).Resource(schema.GroupVersionResource{Group: "autoscaling",
			Version: "v1", Resource: "horizontalpodautoscalers"}).Namespace(ns)
		hpa := object("autoscaling/v1", "HorizontalPodAutoscaler", ns, "h", map[string]any{"spec": map[string]any{
			"scaleTargetRef": map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
			"maxReplicas":    int64(3)}})
		_, err := hpas.Create(t.Context(), hpa, metav1.CreateOptions{})
		if policy == admissionregistrationv1.Exact {
			if err != nil {
				t.Errorf("Exact: %v", err)
			}
			continue
		}
		if want := `admission webhook "hpa.example.com" denied the request: no thanks`; err == nil || err.Error() != want {
			t.Fatalf("Equivalent: got %v, want %s", err, want)
		}
		reqs := e.hook.requests("/deny", ns, "h")
		if len(reqs) != 1 {
			t.Fatalf("Equivalent: webhook called %d times, want 1", len(reqs))
		}
		r := reqs[0]
		var obj struct {
			APIVersion string `json:"apiVersion"`
			Spec       struct {
				MaxReplicas int32 `json:"maxReplicas"`
			} `json:"spec"`
		}
		_ = json.Unmarshal(r.Object.Raw, &obj)
		got := fmt.Sprintf("kind %v resource %v requestKind %v requestResource %v object %s maxReplicas %d",
			r.Kind, r.Resource, *r.RequestKind, *r.RequestResource, obj.APIVersion, obj.Spec.MaxReplicas)
		want := "kind autoscaling/v2, Kind=HorizontalPodAutoscaler resource {autoscaling v2 horizontalpodautoscalers} " +
			"requestKind autoscaling/v1, Kind=HorizontalPodAutoscaler requestResource {autoscaling v1 horizontalpodautoscalers} " +
			"object autoscaling/v2 maxReplicas 3"
		if got != want {
			t.Errorf("Equivalent: review\n got %s\nwant %s", got, want)
		}
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
