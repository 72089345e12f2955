package servicealloc

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/stratadev/strata/storage/etcd/etcdtest"
)

// testEtcd is the embedded etcd TestMain starts; each test uses keys of
// its own.
var testEtcd *clientv3.Client

func TestMain(m *testing.M) { os.Exit(etcdtest.Main(m, &testEtcd)) }

var keySeq atomic.Int64

func newKey() string { return fmt.Sprintf("/test/ranges/r%d", keySeq.Add(1)) }

// TestEtcdRange runs steps on two ranges over one key, as two replicas:
// each sees what the other allocated and released.
func TestEtcdRange(t *testing.T) {
	const size = 8
	type step struct {
		replica int
		op      string // allocate, release, has, next
		offset  int
		want    bool // allocate: taken now; has: allocated
	}
	cases := []struct {
		name  string
		steps []step
	}{
		{"allocate then taken on the other", []step{
			{0, "allocate", 3, true}, {1, "allocate", 3, false}, {1, "has", 3, true}, {0, "has", 4, false}}},
		{"release is seen by the other", []step{
			{0, "allocate", 5, true}, {1, "release", 5, false}, {0, "allocate", 5, true}, {1, "allocate", 5, false}}},
		{"next skips the other's", []step{
			{0, "allocate", 0, true}, {0, "allocate", 1, true}, {0, "allocate", 2, true}, {0, "allocate", 3, true},
			{0, "allocate", 4, true}, {0, "allocate", 5, true}, {0, "allocate", 6, true},
			{1, "next", 7, true}, {0, "next", 0, false}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			key := newKey()
			rs := []*etcdRange{newEtcdRange(testEtcd, key, size, "r", 0), newEtcdRange(testEtcd, key, size, "r", 0)}
			for i, s := range tc.steps {
				r := rs[s.replica]
				var got bool
				var err error
				switch s.op {
				case "allocate":
					got, err = r.Allocate(s.offset)
				case "release":
					err = r.Release(s.offset)
				case "has":
					got = r.Has(s.offset)
				case "next":
					var offset int
					offset, got, err = r.AllocateNext()
					if got && offset != s.offset {
						t.Errorf("step %d: next gave %d, want %d", i, offset, s.offset)
					}
				}
				if err != nil {
					t.Fatalf("step %d %s(%d) on %d: %v", i, s.op, s.offset, s.replica, err)
				}
				if got != s.want {
					t.Errorf("step %d %s(%d) on %d: %v, want %v", i, s.op, s.offset, s.replica, got, s.want)
				}
			}
		})
	}
}

// TestEtcdRangeConcurrent: ranges racing on one key never hand out an
// offset twice, and together fill the range exactly.
func TestEtcdRangeConcurrent(t *testing.T) {
	const size, replicas = 64, 4
	key := newKey()
	var mu sync.Mutex
	got := map[int]int{}
	var wg sync.WaitGroup
	for r := range replicas {
		rg := newEtcdRange(testEtcd, key, size, "r", 0)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				offset, ok, err := rg.AllocateNext()
				if err != nil {
					t.Error(err)
					return
				}
				if !ok {
					return
				}
				mu.Lock()
				if other, dup := got[offset]; dup {
					t.Errorf("offset %d handed to %d and %d", offset, other, r)
				}
				got[offset] = r
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(got) != size {
		t.Errorf("%d offsets allocated, want %d", len(got), size)
	}
}

// TestEtcdRangeOtherRange: stored allocations of another range are refused
// by name, not overwritten.
func TestEtcdRangeOtherRange(t *testing.T) {
	key := newKey()
	if ok, err := newEtcdRange(testEtcd, key, 8, "10.0.0.0/28", 0).Allocate(1); !ok || err != nil {
		t.Fatalf("allocate: %v %v", ok, err)
	}
	_, err := newEtcdRange(testEtcd, key, 8, "10.96.0.0/28", 0).Allocate(1)
	if err == nil || !strings.Contains(err.Error(), "of range 10.0.0.0/28, not 10.96.0.0/28") {
		t.Errorf("got %v, want the ranges named", err)
	}
}

// TestRegistriesWriteOnlyChanges: a repair's snapshot equal to what Get
// read is not written again (the key keeps its revision), a changed one is,
// and an unchanged one is still a Conflict once the key has changed since
// it was read.
func TestRegistriesWriteOnlyChanges(t *testing.T) {
	prefix := "/test/registries" + strings.TrimPrefix(newKey(), "/test/ranges")
	regs, err := NewRegistries(Config{Client: testEtcd, Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	reg, key := regs.ClusterIPs, prefix+ipKey
	modRev := func() int64 {
		t.Helper()
		resp, err := testEtcd.Get(context.Background(), key)
		if err != nil || len(resp.Kvs) != 1 {
			t.Fatalf("get %s: %v, %v", key, resp, err)
		}
		return resp.Kvs[0].ModRevision
	}
	first, err := reg.Get()
	if err != nil {
		t.Fatal(err)
	}
	first.Range, first.Data = "10.0.0.0/24", []byte{1}
	if err := reg.CreateOrUpdate(first); err != nil {
		t.Fatal(err)
	}
	created := modRev()
	same, err := reg.Get()
	if err != nil {
		t.Fatal(err)
	}
	if err := reg.CreateOrUpdate(same); err != nil {
		t.Fatalf("unchanged snapshot: %v", err)
	}
	if got := modRev(); got != created {
		t.Errorf("unchanged snapshot written: revision %d, was %d", got, created)
	}
	same.Data = []byte{3}
	if err := reg.CreateOrUpdate(same); err != nil {
		t.Fatalf("changed snapshot: %v", err)
	}
	if got := modRev(); got <= created {
		t.Errorf("changed snapshot not written: revision %d, was %d", got, created)
	}
	stale, err := reg.Get()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := testEtcd.Put(context.Background(), key, `{"range":"10.0.0.0/24","data":"Bw=="}`); err != nil {
		t.Fatal(err)
	}
	if err := reg.CreateOrUpdate(stale); !apierrors.IsConflict(err) {
		t.Errorf("unchanged snapshot of a key changed since: %v, want a Conflict", err)
	}
}
