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
// between fails it, and run lists again).
func (c *watchCache) load(ctx context.Context) (cacheState, int64, error) {
	st := cacheState{objs: map[string]*entry{}, corrupt: map[string]*Error{}, keys: newKeySet()}
	end := clientv3.GetPrefixRangeEnd(c.s.prefix)
	from, rev := c.s.prefix, int64(0)
	for {
		opts := []clientv3.OpOption{clientv3.WithRange(end), clientv3.WithLimit(relistPage)}
		if rev != 0 {
			opts = append(opts, clientv3.WithRev(rev))
		}
		resp, err := c.s.client.Get(ctx, from, opts...)
		if err != nil {
			return st, 0, err
		}
		if rev == 0 {
			rev = resp.Header.Revision
		}
		objs, errs := c.s.decodeAll(resp.Kvs)
		for i, kv := range resp.Kvs {
			c.addLoaded(&st, kv, objs[i], errs[i])
		}
		if !resp.More || len(resp.Kvs) == 0 {
			return st, rev, nil
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
