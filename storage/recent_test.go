package storage

import (
	"context"
	"sync/atomic"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestUpdatesStartFromTheirOwnLastWrite: updates of one object, each sent
// as soon as the last is answered, each compute their change once: none
// starts from a cached copy older than the store's last write and loses
// the compare-and-swap.
func TestUpdatesStartFromTheirOwnLastWrite(t *testing.T) {
	s := newTestStore(t)
	mustCreate(t, s, widget("r", "a", nil))
	var calls atomic.Int64
	const updates = 200
	for i := range updates {
		_, err := s.GuaranteedUpdate(context.Background(), "r", "a", nil, func(cur *unstructured.Unstructured) (*unstructured.Unstructured, error) {
			calls.Add(1)
			return cur, unstructured.SetNestedField(cur.Object, int64(i+2), "spec", "size")
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if n := calls.Load(); n != updates {
		t.Fatalf("%d updates computed %d times: %d started from a stale copy", updates, n, n-updates)
	}
}

// TestUpdateAfterAnUnseenWrite: when the cache has not caught up with the
// store's last write of a key, the update reads etcd rather than
// computing on the cached copy.
func TestUpdateAfterAnUnseenWrite(t *testing.T) {
	s := newTestStore(t)
	rv := rvOf(t, mustCreate(t, s, widget("r", "b", nil)))
	if err := s.cache.waitRevision(context.Background(), rv, 0); err != nil {
		t.Fatal(err)
	}
	key, _ := s.objectKey("r", "b")
	s.written.note(key, rv+1000, func() int64 { return 0 }) // a write the cache will not see
	var seen []int64
	out, err := s.GuaranteedUpdate(context.Background(), "r", "b", nil, func(cur *unstructured.Unstructured) (*unstructured.Unstructured, error) {
		seen = append(seen, rvOf(t, cur))
		return cur, unstructured.SetNestedField(cur.Object, int64(5), "spec", "size")
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(seen) != 1 || seen[0] != rv || size(out) != 5 {
		t.Fatalf("computed on %v, size %d; want once on etcd's copy at %d", seen, size(out), rv)
	}
}
