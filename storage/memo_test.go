package storage

import (
	"context"
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestListMemos: each item of a list that the watch cache holds comes with
// the memo of its version, the same one for every list until the object
// changes; an item read from etcd at a version the cache no longer holds
// has none, and a list with no such item has no memos at all.
func TestListMemos(t *testing.T) {
	s := newTestStore(t)
	ctx := context.Background()
	mustCreate(t, s, widget("m", "a", nil))
	before := rvOf(t, mustCreate(t, s, widget("m", "b", nil)))
	memosOf := func(opts ListOptions, wantItems int) []*Memo {
		t.Helper()
		list, memos, err := s.ListMemos(ctx, "m", opts)
		if err != nil {
			t.Fatal(err)
		}
		if len(list.Items) != wantItems {
			t.Fatalf("%+v: %d items, want %d", opts, len(list.Items), wantItems)
		}
		return memos
	}

	first := memosOf(ListOptions{}, 2)
	if len(first) != 2 || first[0] == nil || first[1] == nil || first[0] == first[1] {
		t.Fatalf("consistent list from the cache: memos %v, want two distinct", first)
	}
	first[0].Store(0, []byte("a's encoding"))
	again := memosOf(ListOptions{ResourceVersion: "0"}, 2)
	if again[0] != first[0] || again[1] != first[1] {
		t.Fatal("a second list of the same versions has other memos")
	}
	if got := string(again[0].Load(0)); got != "a's encoding" {
		t.Fatalf("memo slot 0 holds %q", got)
	}
	if again[0].Load(1) != nil {
		t.Fatal("an unset slot is not empty")
	}

	after := rvOf(t, setSize(t, s, "m", "a", 2))
	if err := s.cache.waitRevision(ctx, after, 0); err != nil {
		t.Fatal(err)
	}
	changed := memosOf(ListOptions{}, 2)
	if changed[0] == first[0] || changed[0].Load(0) != nil {
		t.Fatal("a changed object kept its old version's memo")
	}
	if changed[1] != first[1] {
		t.Fatal("an unchanged object lost its memo")
	}

	// From etcd: a page of one reuses the cache's version and its memo.
	paged := memosOf(ListOptions{Limit: 1}, 1)
	if len(paged) != 1 || paged[0] != changed[0] {
		t.Fatalf("a page read from etcd: memos %v, want the cache's %p", paged, changed[0])
	}
	// At the revision before the update: a's old version is not in the
	// cache, b's version is.
	old := ListOptions{ResourceVersion: fmt.Sprint(before), ResourceVersionMatch: metav1.ResourceVersionMatchExact}
	mixed := memosOf(old, 2)
	if len(mixed) != 2 || mixed[0] != nil || mixed[1] != first[1] {
		t.Fatalf("exact list at %d: memos %v, want [nil %p]", before, mixed, first[1])
	}
	old.Limit = 1
	if none := memosOf(old, 1); none != nil {
		t.Fatalf("a list without a cached version: memos %v, want none", none)
	}
}
