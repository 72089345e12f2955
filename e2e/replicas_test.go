package e2e

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	"github.com/stratadev/strata/storage/etcd"
)

// TestReplicas runs two "strata server" replicas on one three-member etcd
// cluster started in the test process (--etcd-servers naming all three
// members) and checks, with client-go, what replicas sharing etcd promise:
// reads and watches through one replica see the writes made through the
// other, optimistic concurrency holds across them, a compaction made on etcd
// through the compact_rev_key protocol turns older resourceVersions into 410
// on both, both keep serving when an etcd member stops, and a history of
// concurrent operations over both replicas during a member's loss is
// linearizable (checked with porcupine).
func TestReplicas(t *testing.T) {
	needBinaries(t)
	t.Parallel()
	begin := time.Now()
	cluster := startEtcdCluster(t)
	etcdCli := cluster.client(t, cluster.endpoints()...)
	reps := startReplicas(t, cluster)
	t.Logf("etcd cluster and two replicas ready in %v", time.Since(begin).Round(time.Millisecond))

	t.Run("ReadsAcrossReplicas", func(t *testing.T) { testReadsAcrossReplicas(t, reps) })
	t.Run("WatchAcrossReplicas", func(t *testing.T) { testWatchAcrossReplicas(t, reps) })
	t.Run("ConflictAcrossReplicas", func(t *testing.T) { testConflictAcrossReplicas(t, reps) })
	t.Run("Compaction", func(t *testing.T) { testReplicaCompaction(t, reps, etcdCli) })
	t.Run("MemberLoss", func(t *testing.T) { testReplicaMemberLoss(t, reps, cluster, etcdCli) })
	t.Run("Linearizable", func(t *testing.T) { testReplicasLinearizable(t, reps, cluster, etcdCli) })
}

// etcdCluster is a three-member etcd cluster embedded in the test process,
// on loopback ports, whose members can be stopped and started again on
// their data directories.
type etcdCluster struct {
	opts    []etcd.Options
	mu      sync.Mutex
	members []*etcd.Server // nil while stopped
	cancels []context.CancelFunc
}

func startEtcdCluster(t *testing.T) *etcdCluster {
	t.Helper()
	const n = 3
	c := &etcdCluster{opts: make([]etcd.Options, n), members: make([]*etcd.Server, n), cancels: make([]context.CancelFunc, n)}
	var initial []string
	for i := range n {
		c.opts[i] = etcd.Options{
			DataDir: t.TempDir(), Name: fmt.Sprintf("m%d", i), ClientPort: freePort(t), PeerPort: freePort(t),
			UnsafeNoFsync: false, LogLevel: "fatal",
		}
		initial = append(initial, fmt.Sprintf("m%d=http://127.0.0.1:%d", i, c.opts[i].PeerPort))
	}
	for i := range n {
		c.opts[i].InitialCluster = strings.Join(initial, ",")
	}
	t.Cleanup(func() {
		for i := range n {
			c.stop(i)
		}
	})
	// The members of a new cluster wait for each other: start them together.
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { errs[i] = c.start(i) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	return c
}

// start starts member i (again) and waits until it serves clients.
func (c *etcdCluster) start(i int) error {
	cfg, err := c.opts[i].Complete()
	if err != nil {
		return err
	}
	srv := etcd.NewServer(cfg)
	ctx, cancel := context.WithCancel(context.Background())
	if err := srv.Run(ctx); err != nil {
		cancel()
		return fmt.Errorf("etcd member m%d: %w", i, err)
	}
	c.mu.Lock()
	c.members[i], c.cancels[i] = srv, cancel
	c.mu.Unlock()
	return nil
}

// stop stops member i, if running, and waits until it has stopped.
func (c *etcdCluster) stop(i int) {
	c.mu.Lock()
	srv, cancel := c.members[i], c.cancels[i]
	c.members[i], c.cancels[i] = nil, nil
	c.mu.Unlock()
	if srv == nil {
		return
	}
	cancel()
	<-srv.Done()
}

func (c *etcdCluster) running(i int) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.members[i] != nil
}

func (c *etcdCluster) endpoint(i int) string {
	return fmt.Sprintf("http://127.0.0.1:%d", c.opts[i].ClientPort)
}

func (c *etcdCluster) endpoints() []string {
	var eps []string
	for i := range c.opts {
		eps = append(eps, c.endpoint(i))
	}
	return eps
}

// client is an etcd client of the given endpoints, closed at the end of the test.
func (c *etcdCluster) client(t *testing.T, endpoints ...string) *clientv3.Client {
	t.Helper()
	cli, err := clientv3.New(clientv3.Config{Endpoints: endpoints, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.Close() })
	return cli
}

// leader is the index of the running member that leads the cluster.
func (c *etcdCluster) leader(ctx context.Context, cli *clientv3.Client) (int, error) {
	deadline := time.Now().Add(10 * time.Second)
	for {
		for i := range c.opts {
			if !c.running(i) {
				continue
			}
			sctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			st, err := cli.Status(sctx, c.endpoint(i))
			cancel()
			if err == nil && st.Leader != 0 && st.Leader == st.Header.MemberId {
				return i, nil
			}
		}
		if time.Now().After(deadline) {
			return -1, errors.New("no etcd member says it is the leader")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// ensureRunning restarts any member a failed subtest left stopped.
func (c *etcdCluster) ensureRunning(t *testing.T) {
	t.Helper()
	for i := range c.opts {
		if !c.running(i) {
			if err := c.start(i); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// replica is one "strata server" on the shared etcd cluster, with a typed
// client of its kubeconfig.
type replica struct {
	name string
	srv  *server
	cs   kubernetes.Interface
}

func startReplicas(t *testing.T, cluster *etcdCluster) []*replica {
	t.Helper()
	flags := []string{"--etcd-servers", strings.Join(cluster.endpoints(), ","), "--etcd-compaction-interval", "1h"}
	reps := []*replica{{name: "A"}, {name: "B"}}
	for _, r := range reps {
		r.srv = launchServer(t, t.TempDir(), flags...)
	}
	for _, r := range reps {
		r.srv.waitReady(t)
		cfg := r.srv.restConfig(t)
		cfg.QPS = -1 // no client-side rate limit
		cs, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			t.Fatal(err)
		}
		r.cs = cs
	}
	return reps
}

func (r *replica) configMaps(ns string) interface {
	Create(context.Context, *corev1.ConfigMap, metav1.CreateOptions) (*corev1.ConfigMap, error)
	Update(context.Context, *corev1.ConfigMap, metav1.UpdateOptions) (*corev1.ConfigMap, error)
	Get(context.Context, string, metav1.GetOptions) (*corev1.ConfigMap, error)
	List(context.Context, metav1.ListOptions) (*corev1.ConfigMapList, error)
	Watch(context.Context, metav1.ListOptions) (watch.Interface, error)
	Delete(context.Context, string, metav1.DeleteOptions) error
} {
	return r.cs.CoreV1().ConfigMaps(ns)
}

func configMap(name, value string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string]string{"v": value}}
}

// createNamespace creates ns through r.
func createNamespace(t *testing.T, r *replica, ns string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := r.cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating namespace %s through %s: %v", ns, r.name, err)
	}
}

func rvInt(t *testing.T, rv string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(rv, 10, 64)
	if err != nil {
		t.Fatalf("resourceVersion %q: %v", rv, err)
	}
	return n
}

// testReadsAcrossReplicas: a write through one replica is seen through the
// other by a get and a list at the returned resourceVersion (not older
// than) and by quorum reads.
func testReadsAcrossReplicas(t *testing.T, reps []*replica) {
	ns := "replica-reads"
	createNamespace(t, reps[0], ns)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for i := range 10 {
		w, r := reps[i%2], reps[1-i%2]
		name := fmt.Sprintf("cm-%d", i)
		created, err := w.configMaps(ns).Create(ctx, configMap(name, "1"), metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("create %s through %s: %v", name, w.name, err)
		}
		rv := created.ResourceVersion
		check := func(how string, got *corev1.ConfigMap, err error, wantRV, wantValue string) {
			t.Helper()
			if err != nil {
				t.Fatalf("%s through %s after the write through %s (RV %s): %v", how, r.name, w.name, wantRV, err)
			}
			if got.ResourceVersion != wantRV || got.Data["v"] != wantValue {
				t.Fatalf("%s through %s: RV %s v=%q, want RV %s v=%q (written through %s)", how, r.name, got.ResourceVersion, got.Data["v"], wantRV, wantValue, w.name)
			}
		}
		got, err := r.configMaps(ns).Get(ctx, name, metav1.GetOptions{ResourceVersion: rv})
		check("get RV="+rv, got, err, rv, "1")
		got, err = r.configMaps(ns).Get(ctx, name, metav1.GetOptions{})
		check("quorum get", got, err, rv, "1")
		for _, opts := range []metav1.ListOptions{
			{ResourceVersion: rv},
			{ResourceVersion: rv, ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan},
			{},
		} {
			l, err := r.configMaps(ns).List(ctx, opts)
			if err != nil {
				t.Fatalf("list %+v through %s: %v", opts, r.name, err)
			}
			if rvInt(t, l.ResourceVersion) < rvInt(t, rv) {
				t.Fatalf("list %+v through %s: list RV %s older than the write's %s", opts, r.name, l.ResourceVersion, rv)
			}
			i := slices.IndexFunc(l.Items, func(c corev1.ConfigMap) bool { return c.Name == name })
			if i < 0 {
				t.Fatalf("list %+v through %s (RV %s): no %s, written through %s at RV %s", opts, r.name, l.ResourceVersion, name, w.name, rv)
			}
			check(fmt.Sprintf("list %+v", opts), &l.Items[i], nil, rv, "1")
		}
		// And back: an update through r is seen through w.
		got.Data["v"] = "2"
		updated, err := r.configMaps(ns).Update(ctx, got, metav1.UpdateOptions{})
		if err != nil {
			t.Fatalf("update %s through %s: %v", name, r.name, err)
		}
		w, r = r, w
		got, err = r.configMaps(ns).Get(ctx, name, metav1.GetOptions{ResourceVersion: updated.ResourceVersion})
		check("get RV="+updated.ResourceVersion, got, err, updated.ResourceVersion, "2")
		got, err = r.configMaps(ns).Get(ctx, name, metav1.GetOptions{})
		check("quorum get", got, err, updated.ResourceVersion, "2")
	}
}

// testWatchAcrossReplicas: a watch through one replica sees the creation,
// update and deletion made through the other, in order.
func testWatchAcrossReplicas(t *testing.T, reps []*replica) {
	ns := "replica-watch"
	createNamespace(t, reps[0], ns)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for dir := range 2 {
		w, r := reps[dir], reps[1-dir]
		l, err := r.configMaps(ns).List(ctx, metav1.ListOptions{FieldSelector: notRootCA})
		if err != nil {
			t.Fatal(err)
		}
		wi, err := r.configMaps(ns).Watch(ctx, metav1.ListOptions{FieldSelector: notRootCA, ResourceVersion: l.ResourceVersion})
		if err != nil {
			t.Fatalf("watch through %s from RV %s: %v", r.name, l.ResourceVersion, err)
		}
		name := "written-through-" + strings.ToLower(w.name)
		created, err := w.configMaps(ns).Create(ctx, configMap(name, "1"), metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		created.Data["v"] = "2"
		updated, err := w.configMaps(ns).Update(ctx, created, metav1.UpdateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if err := w.configMaps(ns).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		want := []struct {
			typ   watch.EventType
			rv    string // "" for DELETED: any RV after the update's
			value string
		}{{watch.Added, created.ResourceVersion, "1"}, {watch.Modified, updated.ResourceVersion, "2"}, {watch.Deleted, "", "2"}}
		for _, wt := range want {
			select {
			case ev, ok := <-wi.ResultChan():
				if !ok {
					t.Fatalf("watch through %s ended before %s", r.name, wt.typ)
				}
				got, isCM := ev.Object.(*corev1.ConfigMap)
				if ev.Type != wt.typ || !isCM {
					t.Fatalf("watch through %s: %s %#v, want %s of %s (written through %s)", r.name, ev.Type, ev.Object, wt.typ, name, w.name)
				}
				if got.Name != name || got.Data["v"] != wt.value ||
					(wt.rv != "" && got.ResourceVersion != wt.rv) ||
					(wt.rv == "" && rvInt(t, got.ResourceVersion) <= rvInt(t, updated.ResourceVersion)) {
					t.Fatalf("watch through %s: %s %s RV %s v=%q, want %s RV %s v=%q", r.name, ev.Type, got.Name, got.ResourceVersion, got.Data["v"], name, cmp.Or(wt.rv, ">"+updated.ResourceVersion), wt.value)
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("watch through %s: no %s event of %s within 10s (written through %s)", r.name, wt.typ, name, w.name)
			}
		}
		wi.Stop()
	}
}

// testConflictAcrossReplicas: an update through A with RV r succeeds; the
// same stale RV through B is 409 Conflict (update and delete precondition).
func testConflictAcrossReplicas(t *testing.T, reps []*replica) {
	ns := "replica-conflict"
	createNamespace(t, reps[0], ns)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	a, b := reps[0], reps[1]
	for i := range 5 {
		name := fmt.Sprintf("cas-%d", i)
		if _, err := b.configMaps(ns).Create(ctx, configMap(name, "0"), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		fromA, err := a.configMaps(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		fromB, err := b.configMaps(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		r := fromA.ResourceVersion
		if fromB.ResourceVersion != r {
			t.Fatalf("quorum gets: RV %s through A, %s through B", r, fromB.ResourceVersion)
		}
		fromA.Data["v"] = "A"
		updated, err := a.configMaps(ns).Update(ctx, fromA, metav1.UpdateOptions{})
		if err != nil {
			t.Fatalf("update through A with RV %s: %v", r, err)
		}
		fromB.Data["v"] = "B"
		if _, err := b.configMaps(ns).Update(ctx, fromB, metav1.UpdateOptions{}); !apierrors.IsConflict(err) {
			t.Fatalf("stale update through B with RV %s (A updated it to %s): %v, want 409 Conflict", r, updated.ResourceVersion, err)
		}
		if err := b.configMaps(ns).Delete(ctx, name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{ResourceVersion: &r}}); !apierrors.IsConflict(err) {
			t.Fatalf("delete through B with stale precondition RV %s: %v, want 409 Conflict", r, err)
		}
		got, err := b.configMaps(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil || got.ResourceVersion != updated.ResourceVersion || got.Data["v"] != "A" {
			t.Fatalf("after the refused update: %v %v, want A's update (RV %s, v=A)", got, err, updated.ResourceVersion)
		}
		// With the current RV, B's update goes through.
		got.Data["v"] = "B"
		if _, err := b.configMaps(ns).Update(ctx, got, metav1.UpdateOptions{}); err != nil {
			t.Fatalf("update through B with the current RV %s: %v", got.ResourceVersion, err)
		}
	}
}

// compactRevKey is the key through which kube-apiserver replicas (and
// strata's) coordinate compaction.
const compactRevKey = "compact_rev_key"

// compactAsOperator compacts etcd at rev through the compact_rev_key
// protocol, as storage.Compactor does: a transaction that moves
// compact_rev_key to rev if its version is the one just read (bumping the
// version), then Compact(rev). It is written here from the protocol rather
// than calling storage.Compact, so that the test checks strata against the
// protocol an operator (or kube-apiserver) follows, not against itself.
func compactAsOperator(ctx context.Context, cli *clientv3.Client, rev int64) error {
	for {
		resp, err := cli.Get(ctx, compactRevKey)
		if err != nil {
			return err
		}
		var version int64
		if len(resp.Kvs) > 0 {
			version = resp.Kvs[0].Version
		}
		txn, err := cli.Txn(ctx).
			If(clientv3.Compare(clientv3.Version(compactRevKey), "=", version)).
			Then(clientv3.OpPut(compactRevKey, strconv.FormatInt(rev, 10))).
			Commit()
		if err != nil {
			return err
		}
		if !txn.Succeeded {
			continue // another compactor moved the key meanwhile
		}
		_, err = cli.Compact(ctx, rev)
		return err
	}
}

// testReplicaCompaction: after a compaction made directly on etcd through
// the compact_rev_key protocol, both replicas answer an exact list and a
// watch from an older RV with 410 Expired, within a few seconds, and still
// serve the compacted revision itself.
func testReplicaCompaction(t *testing.T, reps []*replica, etcdCli *clientv3.Client) {
	ns := "replica-compaction"
	createNamespace(t, reps[0], ns)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	created, err := reps[0].configMaps(ns).Create(ctx, configMap("old", "0"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	old := created.ResourceVersion
	cur := created
	for i := range 4 {
		cur.Data["v"] = strconv.Itoa(i + 1)
		if cur, err = reps[(i+1)%2].configMaps(ns).Update(ctx, cur, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	resp, err := etcdCli.Get(ctx, compactRevKey)
	if err != nil {
		t.Fatal(err)
	}
	compactRev := resp.Header.Revision
	before := "none"
	if len(resp.Kvs) > 0 {
		before = fmt.Sprintf("%s (version %d)", resp.Kvs[0].Value, resp.Kvs[0].Version)
	}
	compactedAt := time.Now()
	if err := compactAsOperator(ctx, etcdCli, compactRev); err != nil {
		t.Fatalf("compacting etcd at %d: %v", compactRev, err)
	}
	t.Logf("compacted etcd at revision %d (compact_rev_key was %s); older RV %s", compactRev, before, old)

	const within = 5 * time.Second
	for _, r := range reps {
		// An exact list at the older RV: 410 Expired.
		var lastErr error
		for {
			_, lastErr = r.configMaps(ns).List(ctx, metav1.ListOptions{ResourceVersion: old, ResourceVersionMatch: metav1.ResourceVersionMatchExact})
			if isExpired(lastErr) {
				t.Logf("%s: list Exact at RV %s is 410 Expired %v after the compaction", r.name, old, time.Since(compactedAt).Round(time.Millisecond))
				break
			}
			if time.Since(compactedAt) > within {
				t.Errorf("%s: list Exact at compacted RV %s: %v, want 410 Expired within %v", r.name, old, lastErr, within)
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		// A watch from the older RV: an ERROR event with a 410 Status.
		var last string
		for {
			ev, desc := firstWatchEvent(ctx, r, ns, old)
			if ev != nil && ev.Type == watch.Error {
				st, ok := ev.Object.(*metav1.Status)
				if ok && st.Code == 410 && st.Reason == metav1.StatusReasonExpired {
					t.Logf("%s: watch from RV %s gets ERROR 410 Expired (%q) %v after the compaction", r.name, old, st.Message, time.Since(compactedAt).Round(time.Millisecond))
					break
				}
			}
			last = desc
			if time.Since(compactedAt) > within {
				t.Errorf("%s: watch from compacted RV %s: %s, want an ERROR event with a 410 Expired Status within %v", r.name, old, last, within)
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		// The compacted revision itself is still served.
		l, err := r.configMaps(ns).List(ctx, metav1.ListOptions{FieldSelector: notRootCA, ResourceVersion: strconv.FormatInt(compactRev, 10), ResourceVersionMatch: metav1.ResourceVersionMatchExact})
		if err != nil {
			t.Errorf("%s: list Exact at the compaction revision %d: %v", r.name, compactRev, err)
		} else if len(l.Items) != 1 || l.Items[0].ResourceVersion != cur.ResourceVersion {
			t.Errorf("%s: list Exact at %d: %d items %v, want old at RV %s", r.name, compactRev, len(l.Items), l.Items, cur.ResourceVersion)
		}
	}
	// A watch from the compaction revision sees a later write, on both.
	var watches []watch.Interface
	for _, r := range reps {
		wi, err := r.configMaps(ns).Watch(ctx, metav1.ListOptions{FieldSelector: notRootCA, ResourceVersion: strconv.FormatInt(compactRev, 10)})
		if err != nil {
			t.Fatalf("%s: watch from the compaction revision %d: %v", r.name, compactRev, err)
		}
		defer wi.Stop()
		watches = append(watches, wi)
	}
	cur.Data["v"] = "after"
	after, err := reps[1].configMaps(ns).Update(ctx, cur, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i, wi := range watches {
		select {
		case ev := <-wi.ResultChan():
			got, ok := ev.Object.(*corev1.ConfigMap)
			if ev.Type != watch.Modified || !ok || got.ResourceVersion != after.ResourceVersion {
				t.Errorf("%s: watch from %d: %s %#v, want MODIFIED old at RV %s", reps[i].name, compactRev, ev.Type, ev.Object, after.ResourceVersion)
			}
		case <-time.After(10 * time.Second):
			t.Errorf("%s: watch from %d: no event within 10s", reps[i].name, compactRev)
		}
	}
}

// notRootCA leaves out the kube-root-ca.crt ConfigMap the controllers
// publish in every namespace, for the tests that expect only their own
// ConfigMaps.
const notRootCA = "metadata.name!=kube-root-ca.crt"

func isExpired(err error) bool {
	var st apierrors.APIStatus
	return errors.As(err, &st) && st.Status().Code == 410 && st.Status().Reason == metav1.StatusReasonExpired
}

// firstWatchEvent opens a watch from rv through r and returns its first
// event (nil if none within a second), with a description for messages.
func firstWatchEvent(ctx context.Context, r *replica, ns, rv string) (*watch.Event, string) {
	wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	wi, err := r.configMaps(ns).Watch(wctx, metav1.ListOptions{FieldSelector: notRootCA, ResourceVersion: rv})
	if err != nil {
		return nil, fmt.Sprintf("watch request failed: %v", err)
	}
	defer wi.Stop()
	select {
	case ev, ok := <-wi.ResultChan():
		if !ok {
			return nil, "the watch ended without an event"
		}
		return &ev, fmt.Sprintf("first event %s %#v", ev.Type, ev.Object)
	case <-time.After(time.Second):
		return nil, "no event within 1s"
	}
}

// testReplicaMemberLoss stops etcd's leader; both replicas go on serving
// quorum reads and writes, while the member shuts down and once it is gone,
// and every acknowledged write is there, through both, before and after the
// member is restarted (and on the restarted member itself).
//
// The launcher stops a member gracefully: etcd first turns new client
// requests away and waits up to its request timeout (7s here) for open
// streams such as the replicas' watches, then hands leadership over and
// leaves. Writes go on through all of it.
func testReplicaMemberLoss(t *testing.T, reps []*replica, cluster *etcdCluster, etcdCli *clientv3.Client) {
	cluster.ensureRunning(t)
	defer cluster.ensureRunning(t)
	ns := "replica-member-loss"
	createNamespace(t, reps[0], ns)
	ctx := context.Background()
	leader, err := cluster.leader(ctx, etcdCli)
	if err != nil {
		t.Fatal(err)
	}
	type phase struct {
		name                string
		began               time.Time
		acked, wErrs, rErrs int
		maxWrite, maxRead   time.Duration
		errs                []string
	}
	var (
		acked, failed []string
		phases        []*phase
		next          int
	)
	newPhase := func(name string) *phase {
		ph := &phase{name: name, began: time.Now()}
		phases = append(phases, ph)
		return ph
	}
	// writeOne creates a ConfigMap through one replica and reads it back
	// with a quorum get through the other.
	writeOne := func(ph *phase) bool {
		t.Helper()
		w, r := reps[next%2], reps[1-next%2]
		name := fmt.Sprintf("ml-%d", next)
		next++
		began := time.Now()
		wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		_, err := w.configMaps(ns).Create(wctx, configMap(name, w.name), metav1.CreateOptions{})
		cancel()
		if err != nil {
			failed = append(failed, name)
			ph.wErrs++
			ph.errs = append(ph.errs, fmt.Sprintf("+%v create %s through %s: %v", time.Since(ph.began).Round(time.Millisecond), name, w.name, err))
			return false
		}
		ph.maxWrite = max(ph.maxWrite, time.Since(began))
		acked = append(acked, name)
		ph.acked++
		for attempt := 1; ; attempt++ {
			began := time.Now()
			rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			got, err := r.configMaps(ns).Get(rctx, name, metav1.GetOptions{})
			cancel()
			if err == nil {
				if got.Data["v"] != w.name {
					t.Fatalf("quorum get of %s through %s: v=%q, want %q", name, r.name, got.Data["v"], w.name)
				}
				ph.maxRead = max(ph.maxRead, time.Since(began))
				return true
			}
			if apierrors.IsNotFound(err) {
				t.Fatalf("quorum get through %s of %s, whose creation through %s was acknowledged: %v", r.name, name, w.name, err)
			}
			ph.rErrs++
			ph.errs = append(ph.errs, fmt.Sprintf("+%v get %s through %s: %v", time.Since(ph.began).Round(time.Millisecond), name, r.name, err))
			if attempt == 50 {
				t.Fatalf("no quorum read of %s through %s in 50 attempts:\n%s", name, r.name, strings.Join(ph.errs, "\n"))
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	// writeN acknowledges n more writes, retrying failures for at most 20s.
	writeN := func(ph *phase, n int) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for target := ph.acked + n; ph.acked < target; {
			if !writeOne(ph) {
				if time.Now().After(deadline) {
					t.Fatalf("%s: no write acknowledged for 20s:\n%s", ph.name, strings.Join(ph.errs, "\n"))
				}
				time.Sleep(100 * time.Millisecond)
			}
		}
	}
	checkAll := func(when string) {
		t.Helper()
		for _, r := range reps {
			l, err := r.configMaps(ns).List(ctx, metav1.ListOptions{FieldSelector: notRootCA})
			if err != nil {
				t.Fatalf("%s: quorum list through %s: %v", when, r.name, err)
			}
			have := map[string]bool{}
			for _, c := range l.Items {
				have[c.Name] = true
			}
			for _, name := range acked {
				if !have[name] {
					t.Errorf("%s: %s's list (RV %s) lacks %s, whose creation was acknowledged", when, r.name, l.ResourceVersion, name)
				}
				if _, err := r.configMaps(ns).Get(ctx, name, metav1.GetOptions{}); err != nil {
					t.Errorf("%s: quorum get of acknowledged %s through %s: %v", when, name, r.name, err)
				}
			}
			if len(l.Items) > len(acked)+len(failed) {
				t.Errorf("%s: %s lists %d objects; %d writes acknowledged, %d failed", when, r.name, len(l.Items), len(acked), len(failed))
			}
		}
	}
	logPhases := func() {
		for _, ph := range phases {
			t.Logf("%-36s %6v: %3d writes acknowledged, %d write errors, %d read errors, slowest write %v, slowest quorum read %v",
				ph.name, time.Since(ph.began).Round(time.Millisecond), ph.acked, ph.wErrs, ph.rErrs, ph.maxWrite.Round(time.Millisecond), ph.maxRead.Round(time.Millisecond))
			for _, e := range ph.errs[:min(len(ph.errs), 10)] {
				t.Log("    ", e)
			}
		}
		phases = nil
	}

	stopping := newPhase(fmt.Sprintf("m%d (leader) shutting down", leader))
	gone := make(chan struct{})
	go func() { cluster.stop(leader); close(gone) }()
	for loop := true; loop; {
		select {
		case <-gone:
			loop = false
		case <-time.After(100 * time.Millisecond):
			writeOne(stopping)
			if time.Since(stopping.began) > 30*time.Second {
				t.Fatalf("m%d still stopping after 30s", leader)
			}
		}
	}
	writeN(newPhase(fmt.Sprintf("m%d gone", leader)), 20)
	logPhases()
	checkAll("member gone")

	restarted := time.Now()
	if err := cluster.start(leader); err != nil {
		t.Fatal(err)
	}
	t.Logf("restarted m%d in %v", leader, time.Since(restarted).Round(time.Millisecond))
	writeN(newPhase(fmt.Sprintf("m%d restarted", leader)), 10)
	logPhases()
	checkAll("member restarted")

	// The restarted member has every acknowledged write itself.
	own := cluster.client(t, cluster.endpoint(leader))
	prefix := "/registry/configmaps/" + ns + "/"
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, err := own.Get(ctx, prefix, clientv3.WithPrefix(), clientv3.WithKeysOnly(), clientv3.WithSerializable())
		missing := slices.Clone(acked)
		if err == nil {
			for _, kv := range resp.Kvs {
				if i := slices.Index(missing, strings.TrimPrefix(string(kv.Key), prefix)); i >= 0 {
					missing = slices.Delete(missing, i, i+1)
				}
			}
			if len(missing) == 0 {
				t.Logf("restarted m%d holds all %d acknowledged writes (serializable read from it); %d writes failed", leader, len(acked), len(failed))
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("restarted m%d lacks %d acknowledged writes after 10s (%v; err %v)", leader, len(missing), missing, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// The linearizability check: a history of creates, quorum gets,
// compare-and-swap updates and deletes of a few ConfigMaps, checked against
// a register per ConfigMap whose value is data.v and whose updates are
// compare-and-swap on resourceVersion.

type linKind int

const (
	linGet linKind = iota
	linCreate
	linCAS // update with metadata.resourceVersion = expect
	linDelete
)

type linInput struct {
	key    string
	kind   linKind
	value  string // create, CAS
	expect int64  // CAS
}

type linStatus int

const (
	linOK linStatus = iota
	linNotFound
	linExists
	linConflict
	linUnknown // timeout, connection error, 5xx: may or may not have happened
)

type linOutput struct {
	status linStatus
	value  string // get
	rv     int64  // get, create, CAS
	err    string
}

// linState is one ConfigMap: absent, or present with a value and the
// resourceVersion of the write that set it (0: unknown, after a write whose
// outcome was ambiguous; the next read tells it).
type linState struct {
	exists bool
	value  string
	rv     int64
}

var linModel = porcupine.NondeterministicModel{
	Partition: func(history []porcupine.Operation) [][]porcupine.Operation {
		byKey := map[string][]porcupine.Operation{}
		for _, op := range history {
			k := op.Input.(linInput).key
			byKey[k] = append(byKey[k], op)
		}
		var out [][]porcupine.Operation
		for _, k := range slices.Sorted(maps.Keys(byKey)) {
			out = append(out, byKey[k])
		}
		return out
	},
	Init: func() []any { return []any{linState{}} },
	Step: func(state, input, output any) []any {
		s, in, out := state.(linState), input.(linInput), output.(linOutput)
		switch in.kind {
		case linGet:
			switch out.status {
			case linNotFound:
				if !s.exists {
					return []any{s}
				}
			case linOK:
				if s.exists && s.value == out.value && (s.rv == 0 || s.rv == out.rv) {
					s.rv = out.rv
					return []any{s}
				}
			}
		case linCreate:
			switch out.status {
			case linOK:
				if !s.exists {
					return []any{linState{true, in.value, out.rv}}
				}
			case linExists:
				if s.exists {
					return []any{s}
				}
			case linUnknown:
				if s.exists {
					return []any{s}
				}
				return []any{s, linState{true, in.value, 0}}
			}
		case linCAS:
			mayMatch := s.exists && (s.rv == 0 || s.rv == in.expect)
			mayDiffer := s.exists && s.rv != in.expect
			switch out.status {
			case linOK:
				if mayMatch && out.rv > in.expect {
					return []any{linState{true, in.value, out.rv}}
				}
			case linConflict:
				if mayDiffer {
					return []any{s}
				}
			case linNotFound:
				if !s.exists {
					return []any{s}
				}
			case linUnknown:
				if mayMatch {
					return []any{s, linState{true, in.value, 0}}
				}
				return []any{s}
			}
		case linDelete:
			switch out.status {
			case linOK:
				if s.exists {
					return []any{linState{}}
				}
			case linNotFound:
				if !s.exists {
					return []any{s}
				}
			case linUnknown:
				if s.exists {
					return []any{s, linState{}}
				}
				return []any{s}
			}
		}
		return nil
	},
	DescribeOperation: func(input, output any) string {
		in, out := input.(linInput), output.(linOutput)
		var res string
		switch out.status {
		case linOK:
			res = fmt.Sprintf("ok rv=%d", out.rv)
			if in.kind == linGet {
				res = fmt.Sprintf("%q rv=%d", out.value, out.rv)
			}
		case linNotFound:
			res = "NotFound"
		case linExists:
			res = "AlreadyExists"
		case linConflict:
			res = "Conflict"
		case linUnknown:
			res = "unknown: " + out.err
		}
		switch in.kind {
		case linGet:
			return fmt.Sprintf("get(%s) -> %s", in.key, res)
		case linCreate:
			return fmt.Sprintf("create(%s, %q) -> %s", in.key, in.value, res)
		case linCAS:
			return fmt.Sprintf("cas(%s, rv=%d, %q) -> %s", in.key, in.expect, in.value, res)
		}
		return fmt.Sprintf("delete(%s) -> %s", in.key, res)
	},
	DescribeState: func(state any) string {
		s := state.(linState)
		if !s.exists {
			return "absent"
		}
		return fmt.Sprintf("%q rv=%d", s.value, s.rv)
	},
}

// runLinOp runs one operation through r and classifies its outcome.
func runLinOp(ctx context.Context, r *replica, ns string, in linInput) linOutput {
	ctx, cancel := context.WithTimeout(ctx, 4*time.Second)
	defer cancel()
	cms := r.configMaps(ns)
	var (
		got *corev1.ConfigMap
		err error
	)
	switch in.kind {
	case linGet:
		got, err = cms.Get(ctx, in.key, metav1.GetOptions{})
	case linCreate:
		got, err = cms.Create(ctx, configMap(in.key, in.value), metav1.CreateOptions{})
	case linCAS:
		obj := configMap(in.key, in.value)
		obj.ResourceVersion = strconv.FormatInt(in.expect, 10)
		got, err = cms.Update(ctx, obj, metav1.UpdateOptions{})
	case linDelete:
		err = cms.Delete(ctx, in.key, metav1.DeleteOptions{})
	}
	switch {
	case err == nil:
		out := linOutput{status: linOK}
		if got != nil {
			out.value = got.Data["v"]
			out.rv, err = strconv.ParseInt(got.ResourceVersion, 10, 64)
			if err != nil {
				return linOutput{status: linUnknown, err: "bad resourceVersion " + got.ResourceVersion}
			}
		}
		return out
	case apierrors.IsNotFound(err) && in.kind != linCreate:
		return linOutput{status: linNotFound}
	case apierrors.IsAlreadyExists(err) && in.kind == linCreate:
		return linOutput{status: linExists}
	case apierrors.IsConflict(err) && in.kind == linCAS:
		return linOutput{status: linConflict}
	}
	return linOutput{status: linUnknown, err: err.Error()}
}

// testReplicasLinearizable runs concurrent clients over both replicas while
// etcd's leader is stopped and restarted, and checks the history with
// porcupine.
func testReplicasLinearizable(t *testing.T, reps []*replica, cluster *etcdCluster, etcdCli *clientv3.Client) {
	cluster.ensureRunning(t)
	defer cluster.ensureRunning(t)
	const (
		clients    = 6
		minOps     = 150 // per client
		maxOps     = 400 // per client, if the fault takes long
		stopAfter  = 1500 * time.Millisecond
		downFor    = 1500 * time.Millisecond // after the member is gone
		afterFault = time.Second             // operations go on after the restart
	)
	keys := []string{"k0", "k1", "k2"}
	ns := "replica-linearizable"
	createNamespace(t, reps[1], ns)
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)

	ctx := context.Background()
	start := time.Now()
	now := func() int64 { return int64(time.Since(start)) }
	var (
		mu        sync.Mutex
		history   []porcupine.Operation
		errCount  = map[string]int{}
		done      atomic.Int64
		timeline  []string
		faultOver = make(chan struct{})
	)
	event := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		timeline = append(timeline, fmt.Sprintf("%7.3fs (%4d ops done) ", time.Since(start).Seconds(), done.Load())+fmt.Sprintf(format, args...))
	}

	// The fault: stop the leader 1.5s into the run (the launcher's graceful
	// stop takes up to etcd's request timeout while the replicas' watch
	// streams are open), restart it 1.5s after it is gone.
	faultErr := make(chan error, 1)
	go func() {
		defer close(faultOver)
		time.Sleep(stopAfter)
		leader, err := cluster.leader(ctx, etcdCli)
		if err != nil {
			faultErr <- err
			return
		}
		event("stopping etcd member m%d (the leader)", leader)
		cluster.stop(leader)
		event("m%d gone", leader)
		time.Sleep(downFor)
		event("restarting m%d", leader)
		if err := cluster.start(leader); err != nil {
			faultErr <- err
			return
		}
		event("m%d ready again", leader)
	}()
	var faultEnd atomic.Int64 // when faultOver closed, as now()
	go func() { <-faultOver; faultEnd.Store(now()) }()
	running := func(i int) bool {
		if i < minOps {
			return true
		}
		if i >= maxOps {
			return false
		}
		end := faultEnd.Load()
		return end == 0 || now() < end+int64(afterFault)
	}

	var wg sync.WaitGroup
	for c := range clients {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(seed, uint64(c)))
			// What this client last learned of each key; rv 0: unknown.
			type seen struct {
				known, exists bool
				rv            int64
			}
			last := map[string]seen{}
			for i := 0; running(i); i++ {
				time.Sleep(time.Duration(40+rng.IntN(60)) * time.Millisecond)
				r := reps[(c+i)%2]
				key := keys[rng.IntN(len(keys))]
				in := linInput{key: key, kind: linGet}
				value := fmt.Sprintf("c%d-%d", c, i)
				k, p := last[key], rng.Float64()
				switch {
				case !k.known || (k.exists && k.rv == 0):
				case !k.exists:
					if p < 0.7 {
						in = linInput{key: key, kind: linCreate, value: value}
					}
				case p < 0.45:
					in = linInput{key: key, kind: linCAS, value: value, expect: k.rv}
				case p < 0.55:
					in = linInput{key: key, kind: linDelete}
				case p < 0.6:
					in = linInput{key: key, kind: linCreate, value: value}
				}
				op := porcupine.Operation{ClientId: c, Input: in, Call: now()}
				out := runLinOp(ctx, r, ns, in)
				op.Output, op.Return = out, now()
				done.Add(1)
				switch out.status {
				case linOK:
					k = seen{known: true, exists: in.kind != linDelete, rv: out.rv}
				case linNotFound:
					k = seen{known: true}
				case linExists, linConflict:
					k = seen{known: true, exists: true}
				case linUnknown:
					k = seen{}
				}
				last[key] = k
				mu.Lock()
				if out.status == linUnknown {
					errCount[fmt.Sprintf("%s through %s: %s", [...]string{"get", "create", "cas", "delete"}[in.kind], r.name, out.err)]++
				}
				// A read without an answer tells nothing; a write without
				// one may take effect at any time after its call.
				switch {
				case out.status == linUnknown && in.kind == linGet:
				case out.status == linUnknown:
					op.Return = math.MaxInt64
					history = append(history, op)
				default:
					history = append(history, op)
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	runTime := time.Since(start)
	event("run finished")
	<-faultOver
	select {
	case err := <-faultErr:
		t.Errorf("fault injection: %v", err)
	default:
	}

	t.Logf("%d operations by %d clients over both replicas in %v; fault timeline:\n  %s",
		done.Load(), clients, runTime.Round(time.Millisecond), strings.Join(timeline, "\n  "))
	type counts struct{ ops, gets, creates, cas, deletes, ok, notFound, exists, conflict, unknown int }
	perKey := map[string]*counts{}
	for _, k := range keys {
		perKey[k] = &counts{}
	}
	for _, op := range history {
		in, out := op.Input.(linInput), op.Output.(linOutput)
		c := perKey[in.key]
		c.ops++
		*[...]*int{&c.gets, &c.creates, &c.cas, &c.deletes}[in.kind]++
		*[...]*int{&c.ok, &c.notFound, &c.exists, &c.conflict, &c.unknown}[out.status]++
	}
	for _, k := range keys {
		c := perKey[k]
		t.Logf("key %s: %d operations checked (%d gets, %d creates, %d CAS updates, %d deletes; %d ok, %d NotFound, %d AlreadyExists, %d Conflict, %d unknown)",
			k, c.ops, c.gets, c.creates, c.cas, c.deletes, c.ok, c.notFound, c.exists, c.conflict, c.unknown)
	}
	for _, e := range slices.Sorted(maps.Keys(errCount)) {
		t.Logf("ambiguous outcome x%d: %s", errCount[e], e)
	}

	checkStart := time.Now()
	model := linModel.ToModel()
	res, info := porcupine.CheckOperationsVerbose(model, history, 30*time.Second)
	t.Logf("porcupine: %s for %d operations in %v", res, len(history), time.Since(checkStart).Round(time.Millisecond))
	switch res {
	case porcupine.Ok:
	case porcupine.Illegal:
		f, err := os.CreateTemp("", "strata-replicas-linearizability-*.html")
		if err == nil {
			f.Close()
			if err := porcupine.VisualizePath(model, info, f.Name()); err == nil {
				t.Logf("visualization: %s", f.Name())
			}
		}
		t.Errorf("the history of %d operations is not linearizable", len(history))
	default:
		t.Errorf("porcupine could not decide within 30s (%s)", res)
	}
}

// TestReplicaLinearizabilityModel checks that the model used by
// TestReplicas/Linearizable rejects what it must: a stale read, a conflict
// where the resourceVersion matched, a write that resurrects a deleted
// object, and a read that un-does an ambiguous write it already saw.
func TestReplicaLinearizabilityModel(t *testing.T) {
	type op struct {
		call, ret int64
		in        linInput
		out       linOutput
	}
	const never = math.MaxInt64
	create := func(call, ret int64, v string, out linOutput) op {
		return op{call, ret, linInput{key: "k", kind: linCreate, value: v}, out}
	}
	cas := func(call, ret int64, expect int64, v string, out linOutput) op {
		return op{call, ret, linInput{key: "k", kind: linCAS, value: v, expect: expect}, out}
	}
	get := func(call, ret int64, out linOutput) op { return op{call, ret, linInput{key: "k", kind: linGet}, out} }
	del := func(call, ret int64, out linOutput) op {
		return op{call, ret, linInput{key: "k", kind: linDelete}, out}
	}
	ok := func(v string, rv int64) linOutput { return linOutput{status: linOK, value: v, rv: rv} }
	var (
		notFound = linOutput{status: linNotFound}
		conflict = linOutput{status: linConflict}
		unknown  = linOutput{status: linUnknown}
	)
	for _, tc := range []struct {
		name string
		ops  []op
		want porcupine.CheckResult
	}{
		{"read after CAS", []op{create(0, 1, "a", ok("", 10)), cas(2, 3, 10, "b", ok("", 11)), get(4, 5, ok("b", 11))}, porcupine.Ok},
		{"stale read after CAS", []op{create(0, 1, "a", ok("", 10)), cas(2, 3, 10, "b", ok("", 11)), get(4, 5, ok("a", 10))}, porcupine.Illegal},
		{"concurrent read may be old", []op{create(0, 1, "a", ok("", 10)), cas(2, 5, 10, "b", ok("", 11)), get(3, 4, ok("a", 10))}, porcupine.Ok},
		{"conflict on a matching RV", []op{create(0, 1, "a", ok("", 10)), cas(2, 3, 10, "b", conflict)}, porcupine.Illegal},
		{"two CAS on one RV", []op{create(0, 1, "a", ok("", 10)), cas(2, 3, 10, "b", ok("", 11)), cas(4, 5, 10, "c", ok("", 12))}, porcupine.Illegal},
		{"read after delete", []op{create(0, 1, "a", ok("", 10)), del(2, 3, ok("", 0)), get(4, 5, ok("a", 10))}, porcupine.Illegal},
		{"ambiguous create seen", []op{create(0, never, "a", unknown), get(1, 2, notFound), get(3, 4, ok("a", 12)), cas(5, 6, 12, "b", ok("", 13))}, porcupine.Ok},
		{"ambiguous create never seen", []op{create(0, never, "a", unknown), get(1, 2, notFound), create(3, 4, "b", ok("", 12)), get(5, 6, ok("b", 12))}, porcupine.Ok},
		{"ambiguous create undone", []op{create(0, never, "a", unknown), get(1, 2, ok("a", 12)), get(3, 4, notFound)}, porcupine.Illegal},
	} {
		var history []porcupine.Operation
		for i, o := range tc.ops {
			history = append(history, porcupine.Operation{ClientId: i, Input: o.in, Call: o.call, Output: o.out, Return: o.ret})
		}
		if got := porcupine.CheckOperationsTimeout(linModel.ToModel(), history, 5*time.Second); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
}
