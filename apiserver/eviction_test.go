package apiserver

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// evictionFixture creates pods and budgets for the eviction tests: a pod
// is Running and Ready unless its phase says otherwise.
type evictionFixture struct {
	t  *testing.T
	ts *testServer
	ns string
}

func (f evictionFixture) pod(name, app string, phase corev1.PodPhase) {
	f.t.Helper()
	ctx := context.Background()
	pods := f.ts.client.CoreV1().Pods(f.ns)
	p, err := pods.Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": app}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}}}, metav1.CreateOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	p.Status.Phase = phase
	if phase == corev1.PodRunning {
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	}
	if _, err := pods.UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
		f.t.Fatal(err)
	}
}

// pdb creates a budget selecting app with the status a disruption
// controller would write; observed false leaves observedGeneration behind.
func (f evictionFixture) pdb(name, app string, allowed, healthy, desired int32, observed bool) {
	f.t.Helper()
	ctx := context.Background()
	pdbs := f.ts.client.PolicyV1().PodDisruptionBudgets(f.ns)
	minAvailable := intstr.FromInt32(desired)
	p, err := pdbs.Create(ctx, &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: &minAvailable,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}}}, metav1.CreateOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	p.Status = policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: allowed, CurrentHealthy: healthy,
		DesiredHealthy: desired, ExpectedPods: healthy}
	if observed {
		p.Status.ObservedGeneration = p.Generation
	}
	if _, err := pdbs.UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
		f.t.Fatal(err)
	}
}

func eviction(name string, dryRun ...string) *policyv1.Eviction {
	ev := &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}}
	if len(dryRun) > 0 {
		ev.DeleteOptions = &metav1.DeleteOptions{DryRun: dryRun}
	}
	return ev
}

// TestEviction evicts pods through pods/eviction with client-go's
// PolicyV1().Evictions(ns).Evict, as kubectl drain does, and checks kube-apiserver's
// answers: a pending pod goes without its budget, a running one takes a
// disruption from its budget (recorded in the budget's status), a budget
// that allows none is 429 with a DisruptionBudget cause, a dry run changes
// nothing, a missing pod is 404, and a pod its finalizer holds stays
// marked for deletion with the DisruptionTarget condition.
func TestEviction(t *testing.T) {
	ts := newTestServer(t)
	ctx := context.Background()
	f := evictionFixture{t: t, ts: ts, ns: "default"}
	f.pod("pending", "web", corev1.PodPending)
	f.pod("web-1", "web", corev1.PodRunning)
	f.pod("web-2", "web", corev1.PodRunning)
	f.pod("free", "none", corev1.PodRunning)
	f.pdb("web", "web", 1, 2, 1, true)
	evictions := ts.client.PolicyV1().Evictions("default")
	pods := ts.client.CoreV1().Pods("default")

	tests := []struct {
		name    string
		ev      *policyv1.Eviction
		want    *statusWant // nil: evicted
		cause   string
		deleted bool
	}{
		{name: "dry run of a guarded pod", ev: eviction("web-1", metav1.DryRunAll)},
		{name: "pending pod, budget not consulted", ev: eviction("pending"), deleted: true},
		{name: "running pod, budget allows one", ev: eviction("web-1"), deleted: true},
		{name: "running pod, budget exhausted", ev: eviction("web-2"),
			want:  &statusWant{code: 429, reason: metav1.StatusReasonTooManyRequests, message: "Cannot evict pod as it would violate the pod's disruption budget."},
			cause: "The disruption budget web does not allow evicting pods currently"},
		{name: "pod without budget", ev: eviction("free"), deleted: true},
		{name: "missing pod", ev: eviction("missing"),
			want: &statusWant{code: 404, reason: metav1.StatusReasonNotFound, message: `pods "missing" not found`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := evictions.Evict(ctx, tc.ev)
			if tc.want == nil && err != nil {
				t.Fatalf("Evict: %v", err)
			}
			if tc.want != nil {
				checkStatusErr(t, err, *tc.want)
			}
			if tc.cause != "" {
				se := err.(apierrors.APIStatus).Status()
				if se.Details == nil || len(se.Details.Causes) != 1 || se.Details.Causes[0].Type != policyv1.DisruptionBudgetCause ||
					se.Details.Causes[0].Message != tc.cause {
					t.Errorf("details %+v, want one DisruptionBudget cause %q", se.Details, tc.cause)
				}
			}
			if tc.want != nil && tc.want.code == 404 {
				return
			}
			_, err = pods.Get(ctx, tc.ev.Name, metav1.GetOptions{})
			if gone := apierrors.IsNotFound(err); gone != tc.deleted {
				t.Errorf("pod %s gone = %v (%v), want %v", tc.ev.Name, gone, err, tc.deleted)
			}
		})
	}

	// A pod its finalizer holds stays, marked for deletion and as a
	// disruption target.
	f.pod("held", "none", corev1.PodRunning)
	held, err := pods.Get(ctx, "held", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	held.Finalizers = []string{"example.com/hold"}
	if _, err := pods.Update(ctx, held, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := evictions.Evict(ctx, eviction("held")); err != nil {
		t.Fatalf("Evict held: %v", err)
	}
	held, err = pods.Get(ctx, "held", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var target *corev1.PodCondition
	for i := range held.Status.Conditions {
		if held.Status.Conditions[i].Type == corev1.DisruptionTarget {
			target = &held.Status.Conditions[i]
		}
	}
	if held.DeletionTimestamp == nil || target == nil || target.Status != corev1.ConditionTrue ||
		target.Reason != "EvictionByEvictionAPI" || target.Message != "Eviction API: evicting" {
		t.Errorf("held pod after eviction: deletionTimestamp %v, DisruptionTarget %+v", held.DeletionTimestamp, target)
	}

	pdb, err := ts.client.PolicyV1().PodDisruptionBudgets("default").Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, recorded := pdb.Status.DisruptedPods["web-1"]; pdb.Status.DisruptionsAllowed != 0 || !recorded || len(pdb.Status.DisruptedPods) != 1 {
		t.Errorf("budget web after one eviction: disruptionsAllowed %d, disruptedPods %v; want 0 and web-1",
			pdb.Status.DisruptionsAllowed, pdb.Status.DisruptedPods)
	}
	if c := pdb.Status.Conditions; len(c) != 1 || c[0].Type != policyv1.DisruptionAllowedCondition || c[0].Status != metav1.ConditionFalse ||
		c[0].Reason != policyv1.InsufficientPodsReason {
		t.Errorf("budget web conditions %+v, want DisruptionAllowed False InsufficientPods", c)
	}
}

// TestEvictionRequests checks the answers to eviction requests themselves
// over HTTP: the 201 Status body, a budget whose status is not observed
// yet (429 with Retry-After 10, which client-go would retry ten times), a
// body naming another pod, a failed uid precondition, a pod with
// two budgets (kube-apiserver's 201 carrying a Failure Status with code
// 500), non-matching dry-run options, and verbs pods/eviction does not serve.
func TestEvictionRequests(t *testing.T) {
	ts := newTestServer(t)
	f := evictionFixture{t: t, ts: ts, ns: "default"}
	f.pod("a", "a", corev1.PodRunning)
	f.pod("b", "b", corev1.PodRunning)
	f.pdb("a1", "a", 1, 1, 0, true)
	f.pdb("a2", "a", 1, 1, 0, true)
	f.pod("db-1", "db", corev1.PodRunning)
	f.pdb("db", "db", 1, 1, 0, false)
	json := map[string]string{"Content-Type": "application/json"}
	body := func(name string) []byte {
		return []byte(`{"apiVersion":"policy/v1","kind":"Eviction","metadata":{"name":"` + name + `"}}`)
	}
	tests := []struct {
		name, method, path string
		body               []byte
		code               int
		want               string
	}{
		{name: "pod with two budgets", method: "POST", path: "/api/v1/namespaces/default/pods/a/eviction", body: body("a"), code: 201,
			want: `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.","code":500}`},
		{name: "budget status not observed", method: "POST", path: "/api/v1/namespaces/default/pods/db-1/eviction", body: body("db-1"), code: 429,
			want: `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Cannot evict pod as it would violate the pod's disruption budget.","reason":"TooManyRequests","details":{"causes":[{"reason":"DisruptionBudget","message":"The disruption budget db is still being processed by the server."}],"retryAfterSeconds":10},"code":429}`},
		{name: "name mismatch", method: "POST", path: "/api/v1/namespaces/default/pods/a/eviction", body: body("b"), code: 400,
			want: `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"name in URL does not match name in Eviction object","reason":"BadRequest","code":400}`},
		{name: "non-matching dry run", method: "POST", path: "/api/v1/namespaces/default/pods/b/eviction?dryRun=All", code: 500,
			body: []byte(`{"apiVersion":"policy/v1","kind":"Eviction","metadata":{"name":"b"},"deleteOptions":{"dryRun":["Other"]}}`),
			want: `"message":"Internal error occurred: Non-matching dry-run options in request and content: [All] and [Other]"`},
		{name: "v1beta1 body, dry run", method: "POST", path: "/api/v1/namespaces/default/pods/b/eviction?dryRun=All", code: 201,
			body: []byte(`{"apiVersion":"policy/v1beta1","kind":"Eviction","metadata":{"name":"b"}}`),
			want: `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Success","code":201}`},
		{name: "uid precondition", method: "POST", path: "/api/v1/namespaces/default/pods/b/eviction", code: 409,
			body: []byte(`{"apiVersion":"policy/v1","kind":"Eviction","metadata":{"name":"b"},"deleteOptions":{"preconditions":{"uid":"other"}}}`),
			want: `"message":"Operation cannot be fulfilled on Pod \"b\": the UID in the precondition (other) does not match the UID in record (`},
		{name: "GET is not served", method: "GET", path: "/api/v1/namespaces/default/pods/b/eviction", code: 405},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := rawCall(t, ts, tc.method, tc.path, json, tc.body)
			got := strings.TrimSpace(string(res.body))
			if res.code != tc.code || (tc.want != "" && !strings.Contains(got, tc.want)) {
				t.Errorf("%s %s: %d %s\nwant %d %s", tc.method, tc.path, res.code, got, tc.code, tc.want)
			}
		})
	}
	if _, err := ts.client.CoreV1().Pods("default").Get(context.Background(), "b", metav1.GetOptions{}); err != nil {
		t.Errorf("pod b after a dry-run eviction: %v", err)
	}
}
