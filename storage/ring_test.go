package storage

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
)

// TestEventRingBounds: the history keeps at most its capacity of events
// and at most its byte bound of their sizes, dropping the oldest, and
// reports the newest revision dropped.
func TestEventRingBounds(t *testing.T) {
	type step struct {
		rev, size int64
		dropped   int64   // what push returns
		revs      []int64 // kept, oldest first
		bytes     int64
	}
	for _, tt := range []struct {
		name     string
		capacity int
		maxBytes int64
		steps    []step
	}{
		{"count bound", 2, 100, []step{
			{1, 10, 0, []int64{1}, 10},
			{2, 10, 0, []int64{1, 2}, 20},
			{3, 10, 1, []int64{2, 3}, 20},
		}},
		{"byte bound", 10, 100, []step{
			{1, 40, 0, []int64{1}, 40},
			{2, 40, 0, []int64{1, 2}, 80},
			{3, 20, 0, []int64{1, 2, 3}, 100},
			{4, 30, 1, []int64{2, 3, 4}, 90},
			{5, 90, 4, []int64{5}, 90},
		}},
		{"event over the bound", 10, 100, []step{
			{1, 50, 0, []int64{1}, 50},
			{2, 101, 2, nil, 0},
			{3, 100, 0, []int64{3}, 100},
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := newEventRing(tt.capacity, tt.maxBytes)
			for _, s := range tt.steps {
				dropped := r.push(&cacheEvent{rev: s.rev, size: s.size})
				var revs []int64
				for _, e := range r.after(0) {
					revs = append(revs, e.rev)
				}
				if dropped != s.dropped || fmt.Sprint(revs) != fmt.Sprint(s.revs) || r.bytes != s.bytes {
					t.Fatalf("push rev %d size %d: dropped %d, kept %v, %d bytes; want %d, %v, %d",
						s.rev, s.size, dropped, revs, r.bytes, s.dropped, s.revs, s.bytes)
				}
			}
		})
	}
}

// TestEventRingGrows: a ring's buffer starts small and grows up to its
// capacity, keeping the events in order across the wrap-around; full, it
// drops the oldest as a ring allocated whole would.
func TestEventRingGrows(t *testing.T) {
	const capacity = 40
	r := newEventRing(capacity, 1<<20)
	if len(r.buf) != ringStart {
		t.Fatalf("a new ring's buffer holds %d events, want %d", len(r.buf), ringStart)
	}
	for rev := int64(1); rev <= 100; rev++ {
		if rev == 10 { // wrap around before the first growth
			for range 5 {
				r.popOldest()
			}
		}
		r.push(&cacheEvent{rev: rev, size: 1})
		kept := r.after(0)
		oldest := int64(1)
		if rev >= 10 {
			oldest = max(6, rev-capacity+1)
		}
		if len(kept) != int(rev-oldest+1) || kept[0].rev != oldest || kept[len(kept)-1].rev != rev {
			t.Fatalf("after push %d: kept %d events from %d, want %d from %d", rev, len(kept), kept[0].rev, rev-oldest+1, oldest)
		}
		for i := 1; i < len(kept); i++ {
			if kept[i].rev != kept[i-1].rev+1 {
				t.Fatalf("after push %d: rev %d follows %d", rev, kept[i].rev, kept[i-1].rev)
			}
		}
	}
	if len(r.buf) != capacity {
		t.Fatalf("a full ring's buffer holds %d events, want %d", len(r.buf), capacity)
	}
}

// TestWatchCacheByteBound: updates of large objects keep the history's
// stored bytes within the bound, each event counted as its key and the
// JSON etcd holds at its revision; a watch from a revision the bound
// dropped is 410 Expired.
func TestWatchCacheByteBound(t *testing.T) {
	const bound = 20_000
	var observed atomic.Int64
	s := newTestStore(t, func(c *Config) {
		c.CacheBytes = bound
		c.ObserveCacheBytes = func(n int64) { observed.Store(n) }
	})
	ctx := context.Background()
	w := widget("n", "big", nil)
	w.Object["spec"] = map[string]any{"data": strings.Repeat("x", 6000)}
	first := rvOf(t, mustCreate(t, s, w))
	var last int64
	for i := 0; i < 10; i++ {
		out, err := s.GuaranteedUpdate(ctx, "n", "big", nil, func(cur *unstructured.Unstructured) (*unstructured.Unstructured, error) {
			cur = cur.DeepCopy()
			cur.Object["spec"] = map[string]any{"data": strings.Repeat(fmt.Sprint(i), 6000+i)}
			return cur, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		last = rvOf(t, out)
	}
	if err := s.cache.waitRevision(ctx, last, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	s.cache.mu.RLock()
	kept := s.cache.hist.after(0)
	bytes := s.cache.hist.bytes
	s.cache.mu.RUnlock()
	var sum int64
	for _, e := range kept {
		resp, err := testClient.Get(ctx, e.key, clientv3.WithRev(e.rev))
		if err != nil || len(resp.Kvs) != 1 {
			t.Fatalf("etcd at %d: %v", e.rev, err)
		}
		if want := int64(len(e.key) + len(resp.Kvs[0].Value)); e.size != want {
			t.Errorf("event at %d: size %d, want %d (key and stored JSON)", e.rev, e.size, want)
		}
		sum += e.size
	}
	if bytes != sum || bytes > bound || len(kept) != 3 || kept[len(kept)-1].rev != last || observed.Load() != bytes {
		t.Fatalf("history: %d events, %d bytes (sum %d, observed %d), newest %d; want 3 events within %d bytes, newest %d",
			len(kept), bytes, sum, observed.Load(), kept[len(kept)-1].rev, bound, last)
	}
	wt, err := s.Watch(ctx, "n", ListOptions{ResourceVersion: fmt.Sprint(first)})
	if err != nil {
		t.Fatal(err)
	}
	defer wt.Stop()
	select {
	case ev := <-wt.ResultChan():
		st, ok := ev.Object.(*metav1.Status)
		if ev.Type != watch.Error || !ok || st.Code != http.StatusGone || st.Reason != metav1.StatusReasonExpired {
			t.Fatalf("watch from the dropped revision %d: %v %v, want 410 Expired", first, ev.Type, ev.Object)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no watch event within 10s")
	}
}
