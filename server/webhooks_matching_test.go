package server

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
)

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
