package registry

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/stratadev/strata/storage"
	"github.com/stratadev/strata/storage/etcd/etcdtest"
)

// testEtcd is the embedded etcd TestMain starts once; each test's stores
// keep their objects under their own key prefix.
var testEtcd *clientv3.Client

func TestMain(m *testing.M) { os.Exit(etcdtest.Main(m, &testEtcd)) }

var storeSeq atomic.Int64

// testStores serves the built-in kinds on stores of their own, with the
// namespace rules on (admit) or off, and the default namespaces created.
type testStores struct {
	byGVR map[schema.GroupVersionResource]*Store
	ns    *Namespaces
}

func newTestStores(t *testing.T, admit bool) *testStores {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	prefix := fmt.Sprintf("/registry-test-%d-%d/registry", os.Getpid(), storeSeq.Add(1))
	ts := &testStores{byGVR: map[schema.GroupVersionResource]*Store{}}
	ts.ns = NewNamespaces(ctx, admit, ts.all, nil)
	sh := &Shared{Namespaces: ts.ns, Lookup: ts.lookup}
	for _, k := range Builtin() {
		if k.IsReview() || k.GVK.Group != "" {
			continue
		}
		st, err := storage.New(storage.Config{Client: testEtcd, Resource: k.GroupResource(), Kind: k.GVK,
			Namespaced: k.Namespaced, Prefix: prefix})
		if err != nil {
			t.Fatal(err)
		}
		ts.byGVR[k.GroupVersionResource()] = NewStore(k, st, sh)
	}
	t.Cleanup(func() {
		cancel()
		for _, s := range ts.byGVR {
			s.storage.Close()
		}
	})
	if err := ts.ns.Ensure(ctx); err != nil {
		t.Fatal(err)
	}
	return ts
}

func (ts *testStores) all() []*Store {
	out := make([]*Store, 0, len(ts.byGVR))
	for _, s := range ts.byGVR {
		out = append(out, s)
	}
	return out
}

func (ts *testStores) lookup(gvr schema.GroupVersionResource) (*Store, bool) {
	s, ok := ts.byGVR[gvr]
	return s, ok
}

func (ts *testStores) store(resource string) *Store { return ts.byGVR[core.WithResource(resource)] }

// create creates a core object from its JSON through its store.
func (ts *testStores) create(t *testing.T, resource, ns, body string, opts WriteOptions) (Written, error) {
	t.Helper()
	s := ts.store(resource)
	obj, _, err := s.kind.Decode([]byte(body), FieldValidationStrict)
	if err != nil {
		t.Fatal(err)
	}
	return s.Create(s.kind.Context(context.Background(), ns, "create", "", nil), obj, opts)
}

func configMap(name string, finalizers ...string) string {
	f := ""
	if len(finalizers) > 0 {
		f = fmt.Sprintf(`,"finalizers":["%s"]`, strings.Join(finalizers, `","`))
	}
	return fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":%q%s}}`, name, f)
}

func TestStoreCreateNamespaceRules(t *testing.T) {
	for _, tt := range []struct {
		name, ns string
		admit    bool
		want     string // the error; "" for none
	}{
		{"existing namespace", "default", true, ""},
		{"missing namespace", "missing", true, `namespaces "missing" not found`},
		{"missing namespace, rules off", "missing", false, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ts := newTestStores(t, tt.admit)
			_, err := ts.create(t, "configmaps", tt.ns, configMap("a"), WriteOptions{})
			if got := errText(err); got != tt.want {
				t.Errorf("create in %s: %q, want %q", tt.ns, got, tt.want)
			}
		})
	}
}

func TestStoreDryRunCreateStoresNothing(t *testing.T) {
	ts := newTestStores(t, true)
	out, err := ts.create(t, "configmaps", "default", configMap("dry"), WriteOptions{DryRun: true})
	if err != nil || out.GetName() != "dry" {
		t.Fatalf("dry-run create: %v, %v", out.Unstructured, err)
	}
	_, err = ts.store("configmaps").Get(context.Background(), "default", "dry", storage.GetOptions{})
	if !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("after a dry-run create, get: %v, want not found", err)
	}
}

// TestStoreDeleteWithFinalizers: an object finalizers hold is marked and
// stays; the update that removes its last finalizer removes it.
func TestStoreDeleteWithFinalizers(t *testing.T) {
	ts := newTestStores(t, true)
	ctx := context.Background()
	if _, err := ts.create(t, "configmaps", "default", configMap("held", "example.com/hold"), WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	cms := ts.store("configmaps")
	out, deleted, err := cms.Delete(ctx, "default", "held", &metav1.DeleteOptions{}, nil)
	if err != nil || deleted || out.GetDeletionTimestamp() == nil {
		t.Fatalf("delete: deleted %v, deletionTimestamp %v, err %v; want marked", deleted, out.GetDeletionTimestamp(), err)
	}
	uctx := cms.kind.Context(ctx, "default", "update", "", nil)
	_, err = cms.Update(uctx, "default", "held", "", func(cur *Current) (runtime.Object, error) {
		obj := cur.DeepCopy()
		obj.SetFinalizers(nil)
		return obj, nil
	}, WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cms.Get(ctx, "default", "held", storage.GetOptions{}); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("after the last finalizer went, get: %v, want not found", err)
	}
}

func TestStoreDeletePropagation(t *testing.T) {
	for _, tt := range []struct {
		policy         metav1.DeletionPropagation
		wantFinalizers []string // nil: deleted at once
	}{
		{metav1.DeletePropagationBackground, nil},
		{metav1.DeletePropagationOrphan, []string{metav1.FinalizerOrphanDependents}},
		{metav1.DeletePropagationForeground, []string{metav1.FinalizerDeleteDependents}},
	} {
		t.Run(string(tt.policy), func(t *testing.T) {
			ts := newTestStores(t, true)
			if _, err := ts.create(t, "configmaps", "default", configMap("a"), WriteOptions{}); err != nil {
				t.Fatal(err)
			}
			policy := tt.policy
			out, deleted, err := ts.store("configmaps").Delete(context.Background(), "default", "a",
				&metav1.DeleteOptions{PropagationPolicy: &policy}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if deleted != (tt.wantFinalizers == nil) || !slicesEqual(out.GetFinalizers(), tt.wantFinalizers) {
				t.Errorf("deleted %v with finalizers %q, want %q", deleted, out.GetFinalizers(), tt.wantFinalizers)
			}
		})
	}
}

func TestStoreNamespaceDeletion(t *testing.T) {
	ts := newTestStores(t, true)
	ctx := context.Background()
	namespaces := ts.store("namespaces")
	if _, _, err := namespaces.Delete(ctx, "", "default", &metav1.DeleteOptions{}, nil); errText(err) !=
		`namespaces "default" is forbidden: this namespace may not be deleted` {
		t.Errorf("delete default: %v", err)
	}
	if _, err := ts.create(t, "namespaces", "", `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"doomed"}}`, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := ts.create(t, "configmaps", "doomed", configMap("inside"), WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	out, deleted, err := namespaces.Delete(ctx, "", "doomed", &metav1.DeleteOptions{}, nil)
	if err != nil || deleted {
		t.Fatalf("delete namespace: deleted %v, err %v; want marked", deleted, err)
	}
	if phase := out.Object["status"].(map[string]any)["phase"]; phase != "Terminating" {
		t.Errorf("phase %v, want Terminating", phase)
	}
	// The rule reads the watch cache first, as kube-apiserver's admission
	// reads its informer: wait until the cache holds the mark.
	waitFor(t, func() bool {
		cached, err := namespaces.Get(ctx, "", "doomed", storage.GetOptions{ResourceVersion: "0"})
		return err == nil && cached.GetDeletionTimestamp() != nil
	})
	_, err = ts.create(t, "configmaps", "doomed", configMap("late"), WriteOptions{})
	if want := `configmaps "late" is forbidden: unable to create new content in namespace doomed because it is being terminated`; errText(err) != want {
		t.Errorf("create in the terminating namespace: %q, want %q", errText(err), want)
	}
	waitFor(t, func() bool {
		_, err := namespaces.Get(ctx, "", "doomed", storage.GetOptions{})
		return errors.Is(err, storage.ErrNotFound)
	})
	if _, err := ts.store("configmaps").Get(ctx, "doomed", "inside", storage.GetOptions{}); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("the namespace's config map: %v, want not found", err)
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		return status.Status().Message
	}
	return err.Error()
}

func slicesEqual(a, b []string) bool {
	return len(a) == len(b) && (len(a) == 0 || strings.Join(a, ",") == strings.Join(b, ","))
}

// waitFor polls done until it holds, failing the test after 20 seconds.
func waitFor(t *testing.T, done func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !done() {
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
		time.Sleep(20 * time.Millisecond)
	}
}
