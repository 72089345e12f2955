package storage

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestCreateAndKeys(t *testing.T) {
	s := newTestStore(t)
	ctx := context.Background()
	in := widget("default", "x", nil)
	in.SetResourceVersion("12345")
	out := mustCreate(t, s, in)
	if in.GetResourceVersion() != "12345" {
		t.Fatal("Create changed its input")
	}
	resp, err := testClient.Get(ctx, "/registry/example.com/"+s.cfg.Resource.Resource+"/default/x")
	if err != nil || len(resp.Kvs) != 1 {
		t.Fatalf("object not under /registry/{group}/{resource}/{namespace}/{name}: %v", err)
	}
	if strings.Contains(string(resp.Kvs[0].Value), "resourceVersion") {
		t.Fatalf("stored value carries a resourceVersion: %s", resp.Kvs[0].Value)
	}
	if rvOf(t, out) != resp.Kvs[0].ModRevision {
		t.Fatalf("resourceVersion %s, want the mod revision %d", out.GetResourceVersion(), resp.Kvs[0].ModRevision)
	}
	_, err = s.Create(ctx, widget("default", "x", nil))
	wantStatus(t, err, ErrAlreadyExists, 409)
}

func TestKeyLayout(t *testing.T) {
	core := resourcePrefix("/registry", schema.GroupResource{Resource: "pods"})
	if core != "/registry/pods/" {
		t.Fatalf("core prefix %q", core)
	}
	s := newTestStore(t, func(c *Config) { c.Namespaced = false })
	mustCreate(t, s, widget("", "cluster-thing", nil))
	resp, err := testClient.Get(context.Background(), "/registry/example.com/"+s.cfg.Resource.Resource+"/cluster-thing")
	if err != nil || len(resp.Kvs) != 1 {
		t.Fatalf("cluster-scoped object not under /registry/{group}/{resource}/{name}: %v", err)
	}
	_, err = s.Create(context.Background(), widget("ns", "y", nil))
	wantStatus(t, err, ErrInvalid, 422)
}

func TestBadNamesAndSizes(t *testing.T) {
	s := newTestStore(t, func(c *Config) { c.MaxObjectBytes = 4096 })
	ctx := context.Background()
	for _, tc := range []struct{ ns, name string }{
		// Names the kinds' validation would refuse but are one path
		// segment ("Upper", "a:b") are the kinds' business, as in
		// kube-apiserver's key functions.
		{"default", ".."}, {"default", "a%b"}, {"default", ""}, {"default", "a/b"},
		{"Bad-NS", "ok"}, {"", "ok"}, {strings.Repeat("n", 64), "ok"},
	} {
		_, err := s.Create(ctx, widget(tc.ns, tc.name, nil))
		wantStatus(t, err, ErrInvalid, 422)
		_, err = s.Get(ctx, tc.ns, tc.name, GetOptions{})
		wantStatus(t, err, ErrBadRequest, 400)
	}
	big := widget("default", "big", nil)
	big.Object["data"] = strings.Repeat("x", 5000)
	_, err := s.Create(ctx, big)
	wantStatus(t, err, ErrRequestTooLarge, 413)
	mustCreate(t, s, widget("default", "small", nil))
	_, err = s.GuaranteedUpdate(ctx, "default", "small", nil, func(cur *unstructured.Unstructured) (*unstructured.Unstructured, error) {
		cur.Object["data"] = strings.Repeat("x", 5000)
		return cur, nil
	})
	wantStatus(t, err, ErrRequestTooLarge, 413)
}

// TestEtcdRequestLimit: an object under the store's limit but over etcd's
// request limit is still a 413, not a gRPC error string.
func TestEtcdRequestLimit(t *testing.T) {
	s := newTestStore(t, func(c *Config) { c.MaxObjectBytes = 8 << 20 })
	big := widget("default", "huge", nil)
	big.Object["data"] = strings.Repeat("x", 2<<20)
	_, err := s.Create(context.Background(), big)
	wantStatus(t, err, ErrRequestTooLarge, 413)
}

// TestGuaranteedUpdateObjectDeletedMeanwhile: the object is deleted between
// the read and the compare-and-swap; the update must answer NotFound, not go
// on with no object.
func TestGuaranteedUpdateObjectDeletedMeanwhile(t *testing.T) {
	s := newTestStore(t)
	mustCreate(t, s, widget("default", "doomed", nil))
	calls := 0
	_, err := s.GuaranteedUpdate(context.Background(), "default", "doomed", &Preconditions{UID: "uid-default-doomed"}, func(cur *unstructured.Unstructured) (*unstructured.Unstructured, error) {
		calls++
		if _, err := s.Delete(context.Background(), "default", "doomed", nil); err != nil {
			t.Fatal(err)
		}
		return cur, unstructured.SetNestedField(cur.Object, int64(7), "spec", "size")
	})
	if !errors.Is(err, ErrNotFound) || calls != 1 {
		t.Fatalf("error %v after %d tries, want NotFound after 1", err, calls)
	}
}

func TestGuaranteedUpdateConcurrent(t *testing.T) {
	s := newTestStore(t)
	mustCreate(t, s, widget("default", "counter", nil))
	var wg sync.WaitGroup
	const workers, each = 8, 10
	for i := 0; i < workers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < each; j++ {
				_, err := s.GuaranteedUpdate(context.Background(), "default", "counter", nil, func(cur *unstructured.Unstructured) (*unstructured.Unstructured, error) {
					n, _, _ := unstructured.NestedInt64(cur.Object, "spec", "size")
					return cur, unstructured.SetNestedField(cur.Object, n+1, "spec", "size")
				})
				if err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	got, err := s.Get(context.Background(), "default", "counter", GetOptions{})
	if err != nil || size(got) != 1+workers*each {
		t.Fatalf("counter %d, want %d (%v)", size(got), 1+workers*each, err)
	}
}

func TestPreconditions(t *testing.T) {
	s := newTestStore(t)
	ctx := context.Background()
	cur := mustCreate(t, s, widget("default", "p", nil))
	noop := func(c *unstructured.Unstructured) (*unstructured.Unstructured, error) { return c, nil }
	same, err := s.GuaranteedUpdate(ctx, "default", "p", nil, noop)
	if err != nil || same.GetResourceVersion() != cur.GetResourceVersion() {
		t.Fatalf("a no-op update wrote: %v %v", err, same)
	}
	_, err = s.GuaranteedUpdate(ctx, "default", "p", &Preconditions{UID: "other"}, noop)
	wantStatus(t, err, ErrConflict, 409)
	_, err = s.GuaranteedUpdate(ctx, "default", "p", &Preconditions{ResourceVersion: "1"}, noop)
	wantStatus(t, err, ErrConflict, 409)
	_, err = s.GuaranteedUpdate(ctx, "default", "missing", nil, noop)
	wantStatus(t, err, ErrNotFound, 404)
	boom := errors.New("boom")
	if _, err := s.GuaranteedUpdate(ctx, "default", "p", nil, func(*unstructured.Unstructured) (*unstructured.Unstructured, error) { return nil, boom }); !errors.Is(err, boom) {
		t.Fatalf("tryUpdate error lost: %v", err)
	}
	_, err = s.GuaranteedUpdate(ctx, "default", "p", nil, func(c *unstructured.Unstructured) (*unstructured.Unstructured, error) {
		c.SetName("renamed")
		return c, nil
	})
	wantStatus(t, err, ErrInvalid, 422)

	_, err = s.Delete(ctx, "default", "p", &Preconditions{UID: "other"})
	wantStatus(t, err, ErrConflict, 409)
	_, err = s.Delete(ctx, "default", "p", &Preconditions{ResourceVersion: "1"})
	wantStatus(t, err, ErrConflict, 409)
	gone, err := s.Delete(ctx, "default", "p", &Preconditions{UID: cur.GetUID(), ResourceVersion: cur.GetResourceVersion()})
	if err != nil || gone.GetName() != "p" {
		t.Fatalf("delete: %v", err)
	}
	_, err = s.Delete(ctx, "default", "p", nil)
	wantStatus(t, err, ErrNotFound, 404)
}

func TestCount(t *testing.T) {
	s := newTestStore(t)
	for i := 0; i < 5; i++ {
		mustCreate(t, s, widget(fmt.Sprintf("ns%d", i%2), fmt.Sprintf("c%d", i), nil))
	}
	all, err := s.Count(context.Background(), "")
	if err != nil || all != 5 {
		t.Fatalf("count %d %v", all, err)
	}
	one, err := s.Count(context.Background(), "ns0")
	if err != nil || one != 3 {
		t.Fatalf("count ns0 %d %v", one, err)
	}
}

// TestGetShared: a shared read the cache serves is the cached object
// itself, the same for every reader; any other read is a private copy
// whose changes the cache never sees.
func TestGetShared(t *testing.T) {
	s := newTestStore(t)
	ctx := context.Background()
	created := mustCreate(t, s, widget("default", "x", nil))
	for _, rv := range []string{"", "0", created.GetResourceVersion()} {
		a, err := s.Get(ctx, "default", "x", GetOptions{ResourceVersion: rv, Shared: true})
		if err != nil {
			t.Fatal(err)
		}
		b, err := s.Get(ctx, "default", "x", GetOptions{ResourceVersion: rv, Shared: true})
		if err != nil {
			t.Fatal(err)
		}
		if a != b {
			t.Errorf("rv %q: two shared reads returned two objects, want the cached one", rv)
		}
		own, err := s.Get(ctx, "default", "x", GetOptions{ResourceVersion: rv})
		if err != nil {
			t.Fatal(err)
		}
		if own == a {
			t.Errorf("rv %q: an unshared read returned the cached object", rv)
		}
		own.SetLabels(map[string]string{"changed": "yes"})
		if again, _ := s.Get(ctx, "default", "x", GetOptions{ResourceVersion: rv, Shared: true}); again.GetLabels() != nil {
			t.Errorf("rv %q: a change to a private copy reached the cache: %v", rv, again.GetLabels())
		}
	}
}
