package apiserver

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// TestControllerRuntimeLeaderElection starts two controller-runtime
// managers with leader election on coordination.k8s.io Leases: one leads
// and reports it through the events.k8s.io recorder, the other waits, and
// takes over once the first releases its Lease.
func TestControllerRuntimeLeaderElection(t *testing.T) {
	ts := newTestServer(t)
	ctx := t.Context()
	cm, err := ts.client.CoreV1().ConfigMaps("default").Create(ctx,
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "leader-note"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	lease, renew, retry := 3*time.Second, 2*time.Second, 100*time.Millisecond
	start := func(name string) (manager.Manager, context.CancelFunc, chan error) {
		m, err := manager.New(ts.config, manager.Options{
			Scheme: clientgoscheme.Scheme, LeaderElection: true, LeaderElectionID: "strata-test",
			LeaderElectionNamespace: "default", LeaderElectionReleaseOnCancel: true,
			LeaseDuration: &lease, RenewDeadline: &renew, RetryPeriod: &retry,
			Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: "0",
		})
		if err != nil {
			t.Fatal(err)
		}
		recorder := m.GetEventRecorder("strata-test")
		if err := m.Add(manager.RunnableFunc(func(ctx context.Context) error {
			recorder.Eventf(cm, nil, corev1.EventTypeNormal, "Elected", "Lead", "manager %s leads", name)
			<-ctx.Done()
			return nil
		})); err != nil {
			t.Fatal(err)
		}
		mctx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- m.Start(mctx) }()
		t.Cleanup(func() { cancel(); <-done })
		return m, cancel, done
	}
	a, stopA, doneA := start("a")
	select {
	case <-a.Elected():
	case <-time.After(10 * time.Second):
		t.Fatal("manager a was not elected")
	}
	holderA := leaseHolder(t, ts)
	b, _, _ := start("b")
	select {
	case <-b.Elected():
		t.Fatal("manager b was elected while a holds the Lease")
	case <-time.After(time.Second):
	}
	stopA()
	if err := <-doneA; err != nil {
		t.Fatalf("manager a: %v", err)
	}
	doneA <- nil // for the cleanup
	select {
	case <-b.Elected():
	case <-time.After(10 * time.Second):
		t.Fatal("manager b was not elected after a released the Lease")
	}
	if holderB := leaseHolder(t, ts); holderB == holderA || holderB == "" {
		t.Errorf("Lease holder %q after the handover, was %q", holderB, holderA)
	}
	// Each leader's event, written by the events.k8s.io/v1 recorder, is
	// also a core Event about the ConfigMap.
	eventually(t, 10*time.Second, func() string {
		evs, err := ts.client.EventsV1().Events("default").List(ctx, metav1.ListOptions{})
		if err != nil {
			return err.Error()
		}
		notes := map[string]bool{}
		for _, e := range evs.Items {
			if e.Reason == "Elected" && e.Action == "Lead" && e.ReportingController == "strata-test" && e.Regarding.Name == cm.Name {
				notes[e.Note] = true
			}
		}
		if !notes["manager a leads"] || !notes["manager b leads"] {
			return "events.k8s.io events: " + jsonString(evs.Items)
		}
		core, err := ts.client.CoreV1().Events("default").List(ctx, metav1.ListOptions{
			FieldSelector: "involvedObject.name=leader-note,involvedObject.kind=ConfigMap,reason=Elected"})
		if err != nil {
			return err.Error()
		}
		if len(core.Items) != 2 {
			return "core events: " + jsonString(core.Items)
		}
		return ""
	})
}

func leaseHolder(t *testing.T, ts *testServer) string {
	t.Helper()
	l, err := ts.client.CoordinationV1().Leases("default").Get(t.Context(), "strata-test", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if l.Spec.HolderIdentity == nil {
		return ""
	}
	return *l.Spec.HolderIdentity
}
