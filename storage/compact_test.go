package storage

import (
	"context"
	"strconv"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// TestCompactionProtocol: two replicas running the compact_rev_key protocol
// compact once per interval between them, each compacting the revision seen
// one interval earlier, and a store learns of the compaction.
func TestCompactionProtocol(t *testing.T) {
	ctx := context.Background()
	s := newTestStore(t)
	cur, err := testClient.Get(ctx, compactRevKey)
	if err != nil {
		t.Fatal(err)
	}
	var v0 int64
	if len(cur.Kvs) > 0 {
		v0 = cur.Kvs[0].Version
	}
	// Round 1: A wins and records the revision; B loses and adopts A's version.
	va, ra, err := compactRound(ctx, testClient, v0, 0)
	if err != nil || va != v0+1 {
		t.Fatalf("replica A round 1: version %d, %v", va, err)
	}
	vb, rb, err := compactRound(ctx, testClient, v0, 0)
	if err != nil || vb != va || rb < ra {
		t.Fatalf("replica B round 1: version %d rev %d, %v", vb, rb, err)
	}
	mustCreate(t, s, widget("n", "after-round-1", nil))
	// Round 2: A wins again and compacts ra; B finds the version moved.
	va2, _, err := compactRound(ctx, testClient, va, ra)
	if err != nil || va2 != va+1 {
		t.Fatalf("replica A round 2: version %d, %v", va2, err)
	}
	if vb2, _, err := compactRound(ctx, testClient, vb, rb); err != nil || vb2 != va2 {
		t.Fatalf("replica B round 2: version %d, %v", vb2, err)
	}
	if _, err := testClient.Get(ctx, "x", withRev(ra-1)...); !isCompacted(err) {
		t.Fatalf("revision %d not compacted: %v", ra-1, err)
	}
	got, err := testClient.Get(ctx, compactRevKey)
	if err != nil || string(got.Kvs[0].Value) != strconv.FormatInt(ra, 10) {
		t.Fatalf("compact_rev_key %v, want %d", got, ra)
	}
	eventually(t, "the store to learn of the compaction", func() bool {
		s.cache.mu.RLock()
		defer s.cache.mu.RUnlock()
		return s.cache.compacted >= ra
	})
}

func withRev(rev int64) []clientv3.OpOption { return []clientv3.OpOption{clientv3.WithRev(rev)} }
