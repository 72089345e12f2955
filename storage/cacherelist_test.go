package storage

import (
	"context"
	"fmt"
	"slices"
	"testing"
)

// TestRelistPages: a cache that loads its state in several pages holds
// every object, at the revisions etcd has, as one read of the prefix would.
func TestRelistPages(t *testing.T) {
	defer func(n int64) { relistPage = n }(relistPage)
	relistPage = 2
	a := newTestStore(t)
	for i := range 7 {
		mustCreate(t, a, widget(fmt.Sprintf("ns%d", i%2), fmt.Sprintf("w%d", i), nil))
	}
	b := newTestStore(t, func(c *Config) { c.Resource = a.cfg.Resource })
	ctx := context.Background()
	fromEtcd, err := a.List(ctx, "", ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	fromCache, err := b.List(ctx, "", ListOptions{ResourceVersion: "0"})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := names(fromCache), names(fromEtcd); !slices.Equal(got, want) || len(got) != 7 {
		t.Fatalf("cache loaded in pages holds %v, etcd %v", got, want)
	}
	for i, it := range fromCache.Items {
		if rv, want := it.GetResourceVersion(), fromEtcd.Items[i].GetResourceVersion(); rv != want {
			t.Errorf("%s: resourceVersion %s from the cache, %s from etcd", it.GetName(), rv, want)
		}
	}
	if rvOf(t, fromCache) < rvOf(t, &fromEtcd.Items[6]) {
		t.Errorf("cache revision %s is before the last create's %s", fromCache.GetResourceVersion(), fromEtcd.Items[6].GetResourceVersion())
	}
}
