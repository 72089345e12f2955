package server

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/stratadev/strata/controllers"
	"github.com/stratadev/strata/storage/etcd"
)

// leadingLog is what a server logs when it starts leading.
const leadingLog = "leading the servers sharing etcd"

// countQuota creates a quota on configmaps in ns and waits for its first
// count (the ResourceQuota admission plugin refuses creations of what a
// quota without status counts): kube-root-ca.crt.
func (s *ctlServer) countQuota(t *testing.T, ns string) {
	t.Helper()
	q := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "counts"},
		Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourceConfigMaps: resource.MustParse("10")}}}
	if _, err := s.client.CoreV1().ResourceQuotas(ns).Create(context.Background(), q, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	s.waitUsed(t, ns, "counts", "the quota's first count", map[string]string{"configmaps": "1"})
}

func (s *ctlServer) createCM(t *testing.T, ns, name string, owners []metav1.OwnerReference) *corev1.ConfigMap {
	t.Helper()
	cm, err := s.client.CoreV1().ConfigMaps(ns).Create(context.Background(),
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, OwnerReferences: owners}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return cm
}

// TestControllersFlag: --controllers=*,-garbage-collector-controller runs
// every controller but the garbage collector: the log names those
// started, and a dependent outlives its deleted owner after the quota
// controller (which runs) has seen the deletion.
func TestControllersFlag(t *testing.T) {
	t.Parallel()
	s := startCtlServer(t, func(o *Options) {
		o.Controllers = []string{"*", "-garbage-collector-controller", "-deployment-controller"}
	})
	want := []string{controllers.ServiceAccountName, controllers.RootCAPublisherName, controllers.RoleAggregationName,
		controllers.ResourceQuotaName, controllers.PolicyStatusName, controllers.PVCProtectionName, controllers.PVProtectionName}
	waitWithin(t, ctlDeadline, "the controllers started", func() (bool, error) {
		return len(startedControllers(s.log.String())) >= len(want), nil
	})
	if got := startedControllers(s.log.String()); !slices.Equal(got, want) {
		t.Errorf("started %q, want %q", got, want)
	}
	const ns = "nogc"
	s.createNamespace(t, ns)
	s.countQuota(t, ns)
	owner := s.createCM(t, ns, "owner", nil)
	s.createCM(t, ns, "dependent", ownedBy(owner))
	s.waitUsed(t, ns, "counts", "the quota counts the owner", map[string]string{"configmaps": "3"})
	if err := s.client.CoreV1().ConfigMaps(ns).Delete(context.Background(), "owner", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	s.waitUsed(t, ns, "counts", "the quota controller saw the deletion", map[string]string{"configmaps": "2"})
	// The collector would have deleted the dependent about as soon as the
	// quota controller saw its owner go; give it three seconds more.
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 3*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := s.client.CoreV1().ConfigMaps(ns).Get(ctx, "dependent", metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	if err == nil {
		t.Error("the dependent was collected with the garbage collector disabled")
	}
}

// leaseHolder is the holder of the controllers' Lease ("" if none).
func (s *ctlServer) leaseHolder(t *testing.T) string {
	t.Helper()
	l, err := s.client.CoordinationV1().Leases("kube-system").Get(context.Background(), controllers.LeaseName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return ""
	}
	if err != nil {
		t.Fatal(err)
	}
	if l.Spec.HolderIdentity == nil {
		return ""
	}
	return *l.Spec.HolderIdentity
}

// TestControllersLeaderElection: two servers on one etcd run the
// controllers on one of them, the holder of the Lease; when it stops,
// the other takes the Lease over (released at once) and runs them.
func TestControllersLeaderElection(t *testing.T) {
	t.Parallel()
	cfg, err := etcd.Options{DataDir: filepath.Join(t.TempDir(), "etcd"), LogLevel: "fatal"}.Complete()
	if err != nil {
		t.Fatal(err)
	}
	ctx, stopEtcd := context.WithCancel(context.Background())
	srv := etcd.NewServer(cfg)
	if err := srv.Run(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stopEtcd(); <-srv.Done() }) // after the servers' own cleanups
	shared := func(o *Options) { o.EtcdServers = cfg.Endpoints() }
	a := startCtlServer(t, shared)
	waitWithin(t, ctlDeadline, "server A to hold the Lease", func() (bool, error) {
		return a.leaseHolder(t) == controllerIdentity(a.o), nil
	})
	b := startCtlServer(t, shared)

	const ns = "replicas"
	a.createNamespace(t, ns)
	a.countQuota(t, ns)
	a.createCM(t, ns, "one", nil)
	b.waitUsed(t, ns, "counts", "the quota counted by the leader", map[string]string{"configmaps": "2"})
	if n := strings.Count(a.log.String(), leadingLog); n != 1 {
		t.Errorf("server A started leading %d times, want 1", n)
	}
	if strings.Contains(b.log.String(), leadingLog) || len(startedControllers(b.log.String())) > 0 {
		t.Errorf("server B runs controllers while A leads:\n%s", b.log.String())
	}
	if h := b.leaseHolder(t); h != controllerIdentity(a.o) {
		t.Errorf("Lease holder %q, want server A %q", h, controllerIdentity(a.o))
	}

	a.stop()
	waitWithin(t, ctlDeadline, "server B to take the Lease over", func() (bool, error) {
		return b.leaseHolder(t) == controllerIdentity(b.o), nil
	})
	if err := b.client.CoreV1().ConfigMaps(ns).Delete(context.Background(), "one", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	b.waitUsed(t, ns, "counts", "the quota counted by the new leader", map[string]string{"configmaps": "1"})
	if n := strings.Count(b.log.String(), leadingLog); n != 1 {
		t.Errorf("server B started leading %d times, want 1", n)
	}
}

func ownedBy(owners ...metav1.Object) []metav1.OwnerReference {
	var refs []metav1.OwnerReference
	for _, o := range owners {
		refs = append(refs, metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: o.GetName(), UID: o.GetUID()})
	}
	return refs
}
