package server

// Tests of admission webhooks against a whole server: validating and
// mutating webhook configurations calling a webhook server the test runs
// (webhookserver_test.go), with kube-apiserver's error texts. Each
// scenario selects its own namespace, so the configurations of one never
// apply to another's writes.

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/stratadev/strata/internal/loopdial"
)

// hookEnv is a server, its admin client and the webhook server.
type hookEnv struct {
	admin     *rest.Config
	client    kubernetes.Interface
	hook      *hookServer
	adminName string // as webhooks see it
}

func startHookEnv(t *testing.T) *hookEnv {
	t.Helper()
	o := NewOptions()
	o.DataDir, o.SecurePort = filepath.Join(t.TempDir(), "data"), 0
	o.Logger = slog.New(slog.DiscardHandler)
	o.webhookDial = loopdial.Dial
	_, admin := start(t, o)
	return &hookEnv{admin: admin, client: kubernetes.NewForConfigOrDie(admin),
		hook: startHookServer(t, net.IPv4(127, 0, 0, 1)), adminName: "strata-admin"}
}

// namespace creates a namespace with labels.
func (e *hookEnv) namespace(t *testing.T, name string, labels map[string]string) {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
	if _, err := e.client.CoreV1().Namespaces().Create(t.Context(), ns, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// webhook calls path on the test's server for writes of ConfigMaps in the
// namespace ns, failing closed, without side effects.
func (e *hookEnv) webhook(name, path, ns string) admissionregistrationv1.ValidatingWebhook {
	return admissionregistrationv1.ValidatingWebhook{
		Name:         name,
		ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: ptr.To(e.hook.url(path)), CABundle: e.hook.caPEM},
		Rules: []admissionregistrationv1.RuleWithOperations{{
			Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.OperationAll},
			Rule: admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"},
				Resources: []string{"configmaps"}},
		}},
		NamespaceSelector:       &metav1.LabelSelector{MatchLabels: map[string]string{corev1.LabelMetadataName: ns}},
		FailurePolicy:           ptr.To(admissionregistrationv1.Fail),
		SideEffects:             ptr.To(admissionregistrationv1.SideEffectClassNone),
		AdmissionReviewVersions: []string{"v1"},
	}
}

// validating creates a ValidatingWebhookConfiguration of hooks, deleted
// when the test ends.
func (e *hookEnv) validating(t *testing.T, name string, hooks ...admissionregistrationv1.ValidatingWebhook) {
	t.Helper()
	c := e.client.AdmissionregistrationV1().ValidatingWebhookConfigurations()
	cfg := &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: name}, Webhooks: hooks}
	if _, err := c.Create(t.Context(), cfg, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), name, metav1.DeleteOptions{}) })
}

// mutating creates a MutatingWebhookConfiguration of hooks (the
// validating webhooks' fields, reinvoked as policy says).
func (e *hookEnv) mutating(t *testing.T, name string, policy admissionregistrationv1.ReinvocationPolicyType, hooks ...admissionregistrationv1.ValidatingWebhook) {
	t.Helper()
	cfg := &admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: name}}
	for _, h := range hooks {
		cfg.Webhooks = append(cfg.Webhooks, admissionregistrationv1.MutatingWebhook{Name: h.Name,
			ClientConfig: h.ClientConfig, Rules: h.Rules, FailurePolicy: h.FailurePolicy, MatchPolicy: h.MatchPolicy,
			NamespaceSelector: h.NamespaceSelector, ObjectSelector: h.ObjectSelector, SideEffects: h.SideEffects,
			TimeoutSeconds: h.TimeoutSeconds, AdmissionReviewVersions: h.AdmissionReviewVersions,
			ReinvocationPolicy: &policy, MatchConditions: h.MatchConditions})
	}
	c := e.client.AdmissionregistrationV1().MutatingWebhookConfigurations()
	if _, err := c.Create(t.Context(), cfg, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), name, metav1.DeleteOptions{}) })
}

// probeConfigMap is a probe creating ConfigMaps in ns with labels.
func (e *hookEnv) probeConfigMap(ns string, labels map[string]string) func(string) {
	return func(name string) {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
		_, _ = e.client.CoreV1().ConfigMaps(ns).Create(context.Background(), cm, metav1.CreateOptions{})
	}
}

// createConfigMap creates a ConfigMap with data k=v and labels, returning
// the result and the error's text ("" without error).
func (e *hookEnv) createConfigMap(t *testing.T, ns, name string, labels map[string]string, dryRun bool) (*corev1.ConfigMap, string) {
	t.Helper()
	cm, msg, _ := e.createConfigMapStatus(t, ns, name, labels, dryRun)
	return cm, msg
}

// createConfigMapStatus is createConfigMap with the error's HTTP status.
func (e *hookEnv) createConfigMapStatus(t *testing.T, ns, name string, labels map[string]string, dryRun bool) (*corev1.ConfigMap, string, int32) {
	t.Helper()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Data: map[string]string{"k": "v"}}
	opts := metav1.CreateOptions{}
	if dryRun {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	got, err := e.client.CoreV1().ConfigMaps(ns).Create(t.Context(), cm, opts)
	if err != nil {
		return nil, err.Error(), statusCode(err)
	}
	return got, "", 0
}

// TestWebhooks runs the webhook scenarios on one server.
func TestWebhooks(t *testing.T) {
	e := startHookEnv(t)
	t.Run("decisions", func(t *testing.T) { testWebhookDecisions(t, e) })
	t.Run("review", func(t *testing.T) { testWebhookReview(t, e) })
	t.Run("mutation", func(t *testing.T) { testWebhookMutation(t, e) })
	t.Run("reinvocation", func(t *testing.T) { testWebhookReinvocation(t, e) })
	t.Run("namespaceSelector", func(t *testing.T) { testWebhookNamespaceSelector(t, e) })
	t.Run("sideEffects", func(t *testing.T) { testWebhookSideEffects(t, e) })
	t.Run("customResource", func(t *testing.T) { testWebhookCustomResource(t, e) })
	t.Run("service", func(t *testing.T) { testWebhookService(t, e) })
	t.Run("matchPolicy", func(t *testing.T) { testWebhookMatchPolicy(t, e) })
	t.Run("afterPlugins", func(t *testing.T) { testWebhookAfterPlugins(t, e) })
}

// testWebhookDecisions: what a write is told when one validating or
// mutating webhook allows, refuses, times out or is not selected.
func testWebhookDecisions(t *testing.T, e *hookEnv) {
	denied := `admission webhook "%s" denied the request: no thanks`
	type write struct {
		name    string
		labels  map[string]string
		wantErr string // %s: the webhook's name
		code    int32  // the error's HTTP status
	}
	for _, tc := range []struct {
		name     string
		path     string
		mutating bool
		edit     func(*admissionregistrationv1.ValidatingWebhook)
		writes   []write
	}{
		{name: "allow", path: "/allow", writes: []write{{name: "a"}}},
		{name: "deny", path: "/deny", writes: []write{{name: "a", wantErr: denied, code: 403}}},
		{name: "mutating-deny", path: "/deny", mutating: true, writes: []write{{name: "a", wantErr: denied, code: 403}}},
		// A patch that does not apply fails the write whatever the
		// failurePolicy: the webhook answered.
		{name: "badpatch", path: "/badpatch", mutating: true, writes: []write{{name: "a", wantErr: "Internal error occurred: replace operation does not apply: doc is missing path: /nothing/here: missing value", code: 500}}},
		{name: "timeout-fail", path: "/slow", edit: func(h *admissionregistrationv1.ValidatingWebhook) {
			h.TimeoutSeconds = ptr.To[int32](1)
		}, writes: []write{{name: "a", wantErr: `Internal error occurred: failed calling webhook "%s": failed to call webhook: ` +
			`Post "` + e.hook.url("/slow?timeout=1s") + `": context deadline exceeded`, code: 500}}},
		{name: "timeout-ignore", path: "/slow", edit: func(h *admissionregistrationv1.ValidatingWebhook) {
			h.TimeoutSeconds, h.FailurePolicy = ptr.To[int32](1), ptr.To(admissionregistrationv1.Ignore)
		}, writes: []write{{name: "a"}}},
		{name: "objectSelector", path: "/deny", edit: func(h *admissionregistrationv1.ValidatingWebhook) {
			h.ObjectSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"hook": "deny"}}
		}, writes: []write{{name: "plain"}, {name: "labelled", labels: map[string]string{"hook": "deny"}, wantErr: denied, code: 403}}},
		{name: "matchConditions", path: "/deny", edit: func(h *admissionregistrationv1.ValidatingWebhook) {
			h.MatchConditions = []admissionregistrationv1.MatchCondition{{Name: "prefixed",
				Expression: "object.metadata.name.startsWith('deny-') || object.metadata.name.startsWith('probe-')"}}
		}, writes: []write{{name: "keep-a"}, {name: "deny-a", wantErr: denied, code: 403}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ns := "decisions-" + strings.ToLower(tc.name)
			hookName := strings.ToLower(tc.name) + ".example.com"
			e.namespace(t, ns, nil)
			h := e.webhook(hookName, tc.path, ns)
			if tc.edit != nil {
				tc.edit(&h)
			}
			if tc.mutating {
				e.mutating(t, ns, admissionregistrationv1.NeverReinvocationPolicy, h)
			} else {
				e.validating(t, ns, h)
			}
			e.hook.awaitCalled(t, tc.path, ns, e.probeConfigMap(ns, map[string]string{"hook": "deny"}))
			for _, w := range tc.writes {
				want := strings.ReplaceAll(w.wantErr, "%s", hookName)
				if _, got, code := e.createConfigMapStatus(t, ns, w.name, w.labels, false); got != want || code != w.code {
					t.Errorf("creating %s:\n got %d %q\nwant %d %q", w.name, code, got, w.code, want)
				}
			}
		})
	}
}

// testWebhookReview: the AdmissionReview a webhook receives for each
// write, field by field, and a dry run (sideEffects None) marked so.
func testWebhookReview(t *testing.T, e *hookEnv) {
	const ns = "review"
	e.namespace(t, ns, nil)
	e.validating(t, ns, e.webhook("review.example.com", "/allow", ns))
	e.hook.awaitCalled(t, "/allow", ns, e.probeConfigMap(ns, nil))
	cms := e.client.CoreV1().ConfigMaps(ns)
	ctx := t.Context()
	for _, tc := range []struct {
		name, op, options string
		dryRun            bool
		write             func() error
	}{
		{name: "c1", op: "CREATE", options: "CreateOptions", write: func() error {
			_, err := e.createConfigMap(t, ns, "c1", nil, false)
			return errorOf(err)
		}},
		{name: "c2", op: "CREATE", options: "CreateOptions", dryRun: true, write: func() error {
			_, err := e.createConfigMap(t, ns, "c2", nil, true)
			return errorOf(err)
		}},
		{name: "c1", op: "UPDATE", options: "UpdateOptions", write: func() error {
			cm, err := cms.Get(ctx, "c1", metav1.GetOptions{})
			if err == nil {
				cm.Data["k"] = "w"
				_, err = cms.Update(ctx, cm, metav1.UpdateOptions{})
			}
			return err
		}},
		{name: "c1", op: "UPDATE", options: "PatchOptions", write: func() error {
			_, err := cms.Patch(ctx, "c1", "application/merge-patch+json", []byte(`{"data":{"k":"x"}}`), metav1.PatchOptions{})
			return err
		}},
		{name: "c1", op: "DELETE", options: "DeleteOptions", write: func() error {
			return cms.Delete(ctx, "c1", metav1.DeleteOptions{})
		}},
	} {
		before := len(e.hook.requests("/allow", ns, tc.name))
		if err := tc.write(); err != nil {
			t.Fatalf("%s %s: %v", tc.op, tc.name, err)
		}
		reqs := e.hook.requests("/allow", ns, tc.name)
		// An update may be tried again from a newer state (the store's
		// guaranteed update, kube-apiserver's too), asking again.
		if len(reqs) == before {
			t.Fatalf("%s %s: webhook not called", tc.op, tc.name)
		}
		got := reviewSummary(reqs[len(reqs)-1])
		want := reviewFields{UIDSet: true, Kind: metav1.GroupVersionKind{Version: "v1", Kind: "ConfigMap"},
			Resource: metav1.GroupVersionResource{Version: "v1", Resource: "configmaps"}, Namespace: ns, Name: tc.name,
			Operation: tc.op, Username: e.adminName, Groups: adminGroups, DryRun: tc.dryRun, OptionsKind: tc.options,
			Object: tc.op != "DELETE", OldObject: tc.op != "CREATE"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s %s: review (-want +got):\n%s", tc.op, tc.name, diff)
		}
	}
	if _, err := cms.Get(ctx, "c2", metav1.GetOptions{}); err == nil {
		t.Error("the dry-run ConfigMap was stored")
	}
}

func errorOf(msg string) error {
	if msg == "" {
		return nil
	}
	return fmt.Errorf("%s", msg)
}

// adminGroups are the admin's groups as webhooks see them: kube-apiserver
// adds system:authenticated to every authenticated user's.
var adminGroups = []string{"system:masters", "system:authenticated"}

// reviewFields are the parts of an AdmissionRequest the tests compare.
type reviewFields struct {
	UIDSet              bool
	Kind                metav1.GroupVersionKind
	Resource            metav1.GroupVersionResource
	Namespace, Name     string
	Operation, Username string
	Groups              []string
	DryRun              bool
	OptionsKind         string
	Object, OldObject   bool // present
}

func reviewSummary(r *admissionv1.AdmissionRequest) reviewFields {
	var opts metav1.TypeMeta
	_ = json.Unmarshal(r.Options.Raw, &opts)
	return reviewFields{UIDSet: r.UID != "", Kind: r.Kind, Resource: r.Resource, Namespace: r.Namespace, Name: r.Name,
		Operation: string(r.Operation), Username: r.UserInfo.Username, Groups: r.UserInfo.Groups, DryRun: ptr.Deref(r.DryRun, false),
		OptionsKind: opts.Kind, Object: len(r.Object.Raw) > 0, OldObject: len(r.OldObject.Raw) > 0}
}
