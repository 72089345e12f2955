package storage

import (
	"context"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// relistPage is how many objects relist reads from etcd at once. One
// range of the whole prefix would hold every stored byte at the same time,
// twice over in the embedded etcd (its gRPC buffers on both sides, which
// their pools keep after), besides the decoded objects: with pages, a
// restart on many objects peaks at the decoded state and one page.
var relistPage int64 = 500 // a variable for the tests

// cacheState is the state relist builds before it replaces the cache's.
type cacheState struct {
	objs    map[string]*entry
	corrupt map[string]*Error
	keys    *keySet
}

// relist loads the prefix at the newest revision and resets the history.
// Existing watchers are ended: they may have missed changes.
func (c *watchCache) relist(ctx context.Context) (int64, error) {
	st, rev, err := c.load(ctx)
	if err != nil {
		return 0, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closeWatchersLocked()
	c.objs, c.corrupt, c.keys = st.objs, st.corrupt, st.keys
	c.hist.reset()
	c.observeBytesLocked()
	c.rev = rev
	c.start = max(c.rev, c.compacted)
	c.ready = true
	c.broadcastLocked()
	return c.rev, nil
}

// load reads and decodes the prefix in pages of relistPage, the first at
// the newest revision and the others at the same one (a compaction in
// between fails it, and run lists again). etcd reads the next page while
// this one is decoded and added: the reading is a large share of the
// load's CPU, on one core, and the adding, on another, would otherwise
// wait for it.
func (c *watchCache) load(ctx context.Context) (cacheState, int64, error) {
	st := cacheState{objs: map[string]*entry{}, corrupt: map[string]*Error{}, keys: newKeySet()}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	pages := make(chan loadedPage, 1)
	go c.readPages(ctx, pages)
	var rev int64
	for p := range pages {
		if p.err != nil {
			return st, 0, p.err
		}
		rev = p.rev
		objs, errs := c.s.decodeAll(p.kvs)
		for i, kv := range p.kvs {
			c.addLoaded(&st, kv, objs[i], errs[i])
		}
	}
	if err := ctx.Err(); err != nil {
		return st, 0, err // the reading stopped early
	}
	return st, rev, nil
}

// loadedPage is one page of the prefix as etcd returned it, at revision
// rev, or the error that ended the reading.
type loadedPage struct {
	kvs []*mvccpb.KeyValue
	rev int64
	err error
}

// readPages reads the prefix in pages into pages, and closes it after the
// last page or an error, or once ctx ends.
func (c *watchCache) readPages(ctx context.Context, pages chan<- loadedPage) {
	defer close(pages)
	end := clientv3.GetPrefixRangeEnd(c.s.prefix)
	from, rev := c.s.prefix, int64(0)
	for {
		opts := []clientv3.OpOption{clientv3.WithRange(end), clientv3.WithLimit(relistPage)}
		if rev != 0 {
			opts = append(opts, clientv3.WithRev(rev))
		}
		resp, err := c.s.client.Get(ctx, from, opts...)
		p := loadedPage{err: err}
		if err == nil {
			if rev == 0 {
				rev = resp.Header.Revision
			}
			p = loadedPage{kvs: resp.Kvs, rev: rev}
		}
		select {
		case pages <- p:
		case <-ctx.Done():
			return
		}
		if err != nil || !resp.More || len(resp.Kvs) == 0 {
			return
		}
		from = string(resp.Kvs[len(resp.Kvs)-1].Key) + "\x00"
	}
}

// addLoaded adds one listed key-value, decoded as obj or failing with err,
// to st.
func (c *watchCache) addLoaded(st *cacheState, kv *mvccpb.KeyValue, obj *unstructured.Unstructured, err error) {
	key := string(kv.Key)
	if err != nil {
		c.s.log.Error("watch cache: undecodable object", "key", key, "err", err)
		st.corrupt[key] = asCorrupt(err)
		return
	}
	c.fields.share(obj.Object)
	e := &entry{obj: obj, modRev: kv.ModRevision, size: int64(len(kv.Key) + len(kv.Value))}
	st.objs[key] = e
	st.keys.set(key, e)
}
