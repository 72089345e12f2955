package storage

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
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

// failingKV fails the first read at a set revision (a page after the
// first) with err, as a compaction between pages would.
type failingKV struct {
	clientv3.KV
	err    error
	failed atomic.Bool
}

func (f *failingKV) Get(ctx context.Context, key string, opts ...clientv3.OpOption) (*clientv3.GetResponse, error) {
	if clientv3.OpGet(key, opts...).Rev() != 0 && f.failed.CompareAndSwap(false, true) {
		return nil, f.err
	}
	return f.KV.Get(ctx, key, opts...)
}

// TestRelistPageFails: a load whose second page fails ends with that
// error, and the cache lists again and holds every object.
func TestRelistPageFails(t *testing.T) {
	defer func(n int64) { relistPage = n }(relistPage)
	relistPage = 2
	a := newTestStore(t)
	for i := range 7 {
		mustCreate(t, a, widget("ns", fmt.Sprintf("w%d", i), nil))
	}
	kv := &failingKV{KV: testClient.KV, err: rpctypes.ErrCompacted}
	client := clientv3.NewCtxClient(context.Background())
	client.KV, client.Watcher = kv, testClient.Watcher
	b := newTestStore(t, func(c *Config) {
		c.Resource = a.cfg.Resource
		c.Client = client
		c.NewWatcher = func() clientv3.Watcher { return clientv3.NewWatcher(testClient) }
	})
	if !kv.failed.Load() {
		t.Fatal("no page after the first was read")
	}
	list, err := b.List(context.Background(), "", ListOptions{ResourceVersion: "0"})
	if err != nil {
		t.Fatal(err)
	}
	if got := names(list); len(got) != 7 {
		t.Errorf("cache holds %v after a failed page, want 7 objects", got)
	}
}
