package storage

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
)

// watchCache mirrors one resource type in memory. One etcd watch feeds it; it
// serves RV=0 and not-older-than reads, and starts watches from its state or
// its bounded event history.
//
// The cache's revision rev means: objs is etcd's state of the prefix at rev,
// and every change up to rev is in the history (back to start). Progress
// notifications move rev when other types are written.
type watchCache struct {
	s        *Store
	progress chan struct{} // ask etcd for a progress notification now
	fields   fieldsTable   // used by run's goroutine only

	mu        sync.RWMutex
	ready     bool
	rev       int64
	start     int64 // a watch may start after any revision >= start
	compacted int64
	objs      map[string]*entry
	corrupt   map[string]*Error // keys whose newest bytes do not decode, and why
	keys      *keySet           // keys of objs, in order
	hist      *eventRing
	changed   chan struct{} // closed and replaced whenever rev moves
	watchers  map[uint64]*cacheWatcher
	nextID    uint64
}

func newWatchCache(s *Store) *watchCache {
	return &watchCache{
		s:        s,
		progress: make(chan struct{}, 1),
		objs:     map[string]*entry{},
		corrupt:  map[string]*Error{},
		keys:     newKeySet(),
		hist:     newEventRing(s.cfg.CacheHistory, s.cfg.CacheBytes),
		changed:  make(chan struct{}),
		watchers: map[uint64]*cacheWatcher{},
	}
}

// run lists and watches until ctx ends, re-listing after a broken watch.
func (c *watchCache) run(ctx context.Context) {
	defer c.closeWatchers()
	for ctx.Err() == nil {
		rev, err := c.relist(ctx)
		if err == nil {
			err = c.follow(ctx, rev)
		}
		if ctx.Err() != nil {
			return
		}
		c.s.log.Warn("watch cache restarting", "resource", c.s.cfg.Resource.String(), "err", err)
		select {
		case <-ctx.Done():
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// follow applies etcd's changes after rev until the watch breaks.
func (c *watchCache) follow(ctx context.Context, rev int64) error {
	w := c.s.cfg.NewWatcher()
	defer w.Close()
	wctx, cancel := context.WithCancel(clientv3.WithRequireLeader(ctx))
	defer cancel()
	ch := w.Watch(wctx, c.s.prefix, clientv3.WithPrefix(), clientv3.WithRev(rev+1))
	tick := time.NewTicker(c.s.cfg.ProgressInterval)
	defer tick.Stop()
	var probe <-chan time.Time // only stores that convert probe (cacheretry.go)
	if c.s.cfg.Convert != nil {
		t := time.NewTicker(conversionProbeInterval)
		defer t.Stop()
		probe = t.C
	}
	healed := make(chan struct{}, 1)
	var probing atomic.Bool // one probe at a time
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-probe:
			if probing.CompareAndSwap(false, true) {
				go func() { defer probing.Store(false); c.probeConversions(wctx, healed) }()
			}
		case <-healed:
			return errConversionsHealed
		case <-tick.C:
			_ = w.RequestProgress(wctx)
		case <-c.progress:
			_ = w.RequestProgress(wctx)
		case resp, ok := <-ch:
			if !ok {
				return errors.New("storage: etcd watch channel closed")
			}
			if err := resp.Err(); err != nil {
				return err
			}
			if resp.IsProgressNotify() {
				c.advance(resp.Header.Revision)
				continue
			}
			c.apply(resp.Events)
		}
	}
}

// askProgress requests a progress notification without blocking.
func (c *watchCache) askProgress() {
	select {
	case c.progress <- struct{}{}:
	default:
	}
}

// decoded pairs an etcd event with its decoded object, or with why its
// bytes do not decode.
type decoded struct {
	ev      *clientv3.Event
	obj     *unstructured.Unstructured
	corrupt *Error
}

// apply decodes a batch of etcd events outside the lock, then updates the
// state and history and hands each change to the watchers.
func (c *watchCache) apply(events []*clientv3.Event) {
	batch := make([]decoded, 0, len(events))
	for _, ev := range events {
		d := decoded{ev: ev}
		if ev.Type == clientv3.EventTypePut {
			obj, err := c.s.decodeCached(ev.Kv)
			if err != nil {
				c.s.log.Error("watch cache: undecodable object", "key", string(ev.Kv.Key), "err", err)
				d.corrupt = asCorrupt(err)
			} else {
				c.fields.share(obj.Object)
			}
			d.obj = obj
		}
		batch = append(batch, d)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, d := range batch {
		if ce := c.applyLocked(d); ce != nil {
			c.recordLocked(ce)
		}
	}
	c.observeBytesLocked()
	if n := len(events); n > 0 && events[n-1].Kv.ModRevision > c.rev {
		c.rev = events[n-1].Kv.ModRevision
		c.broadcastLocked()
	}
}

// observeBytesLocked reports the history's size to Config.ObserveCacheBytes.
func (c *watchCache) observeBytesLocked() {
	if f := c.s.cfg.ObserveCacheBytes; f != nil {
		f(c.hist.bytes)
	}
}

// applyLocked updates objs and keys for one event and returns the change.
func (c *watchCache) applyLocked(d decoded) *cacheEvent {
	key, rev := string(d.ev.Kv.Key), d.ev.Kv.ModRevision
	var prev *unstructured.Unstructured
	if e := c.objs[key]; e != nil {
		prev = e.obj
	}
	delete(c.corrupt, key)
	if d.corrupt != nil {
		// Reads of the key fail from now on; the old state must not be
		// served as current. Watchers get no event: there is no object
		// to send (kube-apiserver's watch cache cannot decode it either).
		c.corrupt[key] = d.corrupt
		c.forgetLocked(key)
		return nil
	}
	if d.ev.Type == clientv3.EventTypeDelete {
		if prev == nil {
			return nil
		}
		// The DELETED event holds a copy of the last state.
		size := c.objs[key].size
		c.forgetLocked(key)
		return &cacheEvent{typ: watch.Deleted, key: key, obj: withResourceVersion(prev, rev), prev: prev, rev: rev, size: size}
	}
	size := int64(len(key) + len(d.ev.Kv.Value))
	e := &entry{obj: d.obj, modRev: rev, size: size}
	c.objs[key] = e
	c.keys.set(key, e)
	if prev == nil {
		return &cacheEvent{typ: watch.Added, key: key, obj: d.obj, rev: rev, size: size}
	}
	return &cacheEvent{typ: watch.Modified, key: key, obj: d.obj, prev: prev, rev: rev, size: size}
}

// forgetLocked removes key from the state.
func (c *watchCache) forgetLocked(key string) {
	if _, ok := c.objs[key]; !ok {
		return
	}
	delete(c.objs, key)
	c.keys.delete(key)
}

// recordLocked appends to the history and dispatches to the watchers. A
// watcher whose buffer is full is ended rather than allowed to stall the
// cache; its client re-watches from the last revision it saw.
func (c *watchCache) recordLocked(ce *cacheEvent) {
	if dropped := c.hist.push(ce); dropped != 0 {
		c.start = max(c.start, dropped)
	}
	for id, w := range c.watchers {
		if !strings.HasPrefix(ce.key, w.prefix) {
			continue
		}
		select {
		case w.in <- ce:
		default:
			c.s.log.Warn("watch cache: ending a watcher that fell behind", "resource", c.s.cfg.Resource.String())
			c.removeLocked(id)
		}
	}
}

// advance moves rev on a progress notification and tells bookmark-enabled
// watchers that they have seen everything up to it.
func (c *watchCache) advance(rev int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if rev <= c.rev {
		return
	}
	c.rev = rev
	mark := &cacheEvent{typ: watch.Bookmark, rev: rev}
	for _, w := range c.watchers {
		if w.bookmarks {
			select {
			case w.in <- mark:
			default: // a full buffer already carries a newer revision soon
			}
		}
	}
	c.broadcastLocked()
}

func (c *watchCache) broadcastLocked() {
	close(c.changed)
	c.changed = make(chan struct{})
}

// noteCompacted records a compaction learned through compact_rev_key: watch
// starts before it are 410 Expired, as they would be from etcd.
func (c *watchCache) noteCompacted(rev int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if rev > c.compacted {
		c.compacted = rev
		c.start = max(c.start, rev)
	}
}

// waitRevision waits until the cache is ready and has reached rev, asking
// etcd for progress meanwhile. After timeout (0: none) it fails with
// ErrTooLargeRV, or 429 when the cache never became ready.
func (c *watchCache) waitRevision(ctx context.Context, rev int64, timeout time.Duration) error {
	// Most waits are over before they begin (a consistent read finds the
	// cache at etcd's revision): answer those without starting a timer
	// and a ticker, about 8 of a consistent GET's 170 allocations.
	c.mu.RLock()
	ready, cur := c.ready, c.rev
	c.mu.RUnlock()
	if ready && cur >= rev {
		return nil
	}
	var deadline <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		deadline = t.C
	}
	nudge := time.NewTicker(50 * time.Millisecond)
	defer nudge.Stop()
	for asked := false; ; asked = true {
		c.mu.RLock()
		ready, cur, changed := c.ready, c.rev, c.changed
		c.mu.RUnlock()
		if ready && cur >= rev {
			return nil
		}
		if !asked && ready {
			c.askProgress() // behind: ask at once rather than at the first nudge
		}
		select {
		case <-changed:
		case <-nudge.C:
			c.askProgress()
		case <-ctx.Done():
			return ctx.Err()
		case <-deadline:
			if !ready {
				return newError(ErrWatchCacheNotReady, apierrors.NewTooManyRequests("storage is (re)initializing", 1), nil)
			}
			return tooLargeResourceVersion(rev, cur)
		}
	}
}

// revision is the revision the cache has reached.
func (c *watchCache) revision() int64 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.rev
}

// isReady reports whether the cache holds its initial list and follows etcd.
func (c *watchCache) isReady() bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.ready
}

// get returns the cached object at key, or nil. The object is shared.
func (c *watchCache) get(key string) *unstructured.Unstructured {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if e := c.objs[key]; e != nil {
		return e.obj
	}
	return nil
}

// getWithRevision returns the cached object at key and its modification
// revision, or nil. The object is shared.
func (c *watchCache) getWithRevision(key string) (*unstructured.Unstructured, int64) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if e := c.objs[key]; e != nil {
		return e.obj, e.modRev
	}
	return nil, 0
}

// reuse returns, for each key-value read from etcd, the cache's entry
// when it is the same version (same key and modification revision mean
// the same bytes), or nil. Lists read from etcd then decode only what
// changed since the cache saw it, and share the memos of the rest. The
// objects are shared.
func (c *watchCache) reuse(kvs []*mvccpb.KeyValue) []*entry {
	out := make([]*entry, len(kvs))
	c.mu.RLock()
	defer c.mu.RUnlock()
	for i, kv := range kvs {
		if e, ok := c.objs[string(kv.Key)]; ok && e.modRev == kv.ModRevision {
			out[i] = e
		}
	}
	return out
}

// list pages through the cached objects under prefix. Items share their
// content with the cache. A continue token it hands out names the cache's
// revision, so the next pages read etcd at the same snapshot.
func (c *watchCache) list(prefix string, p listPlan) (page, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if err := c.corruptUnderLocked(prefix); err != nil {
		return page{}, err
	}
	return c.listLocked(prefix, p), nil
}

func (c *watchCache) listLocked(prefix string, p listPlan) page {
	pg := page{rev: c.rev}
	if p.pred.empty() {
		// Every key under prefix is an item, up to the limit: one
		// allocation instead of the doublings of a list of 1,000.
		n := int64(c.keys.countUnder(c.s.prefix, prefix))
		if p.limit > 0 {
			n = min(n, p.limit)
		}
		pg.items = make([]unstructured.Unstructured, 0, n)
	}
	var (
		visited int    // keys seen
		last    string // the key of the last item
		more    bool   // whether a key follows a full page
	)
	c.keys.ascendFrom(prefix, func(key string, e *entry) bool {
		if !strings.HasPrefix(key, prefix) {
			return false
		}
		if p.limit > 0 && int64(len(pg.items)) == p.limit {
			more = true
			return false
		}
		visited++
		if p.pred.matches(e.obj) {
			pg.add(e.obj, &e.memo)
			last = key
		}
		return true
	})
	if more {
		pg.next = last[len(prefix):] + "\x00"
		if p.pred.empty() {
			n := int64(c.keys.countUnder(c.s.prefix, prefix) - visited)
			pg.remaining = &n
		}
	}
	return pg
}

// removeLocked unregisters a watcher and closes its input; its goroutine
// delivers what is buffered and ends.
func (c *watchCache) removeLocked(id uint64) {
	if w, ok := c.watchers[id]; ok {
		delete(c.watchers, id)
		close(w.in)
	}
}

func (c *watchCache) remove(id uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.removeLocked(id)
}

func (c *watchCache) closeWatchersLocked() {
	for id := range c.watchers {
		c.removeLocked(id)
	}
}

func (c *watchCache) closeWatchers() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closeWatchersLocked()
	c.ready = false
}
