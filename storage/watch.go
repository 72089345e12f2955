package storage

import (
	"context"
	"fmt"
	"strconv"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
)

// Watch implements Interface. Every watch is served by the watch cache:
//
//   - RV unset: the state at the newest revision (a quorum read of the
//     revision, then the cache catches up) as ADDED events, then changes;
//   - RV "0": the cache's state as ADDED events, then changes;
//   - RV "N": changes after N from the cache's history; 410 Expired (as an
//     ERROR event) when N is older than the history or compacted; a future N
//     simply waits for changes after it;
//   - sendInitialEvents=true, match=NotOlderThan: the state at a revision
//     not older than N (newest for unset, any for "0") as ADDED events, then a
//     bookmark annotated k8s.io/initial-events-end, then changes.
func (s *Store) Watch(ctx context.Context, namespace string, opts ListOptions) (watch.Interface, error) {
	prefix, err := s.listPrefix(namespace)
	if err != nil {
		return nil, err
	}
	p, err := s.planWatch(opts)
	if err != nil {
		return nil, err
	}
	need := int64(0)
	if p.start == startInitial && p.mode == readNotOlder {
		need = p.rv
	}
	if p.start == startInitial && p.mode == readLatest {
		if need, err = s.revisions.Current(ctx); err != nil {
			return nil, err
		}
	}
	if err := s.cache.waitRevision(ctx, need, s.cfg.TooLargeRVWait); err != nil {
		return nil, err
	}
	return s.cache.startWatch(ctx, prefix, p, opts)
}

// startWatch registers a watcher under the cache lock, so that its initial
// state or replayed history and the events that follow join without a gap.
func (c *watchCache) startWatch(ctx context.Context, prefix string, p watchPlan, opts ListOptions) (watch.Interface, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if p.start == startAfter && p.rv < c.start {
		return expiredWatch(p.rv, c.start), nil
	}
	w := &cacheWatcher{
		cache: c, prefix: prefix, pred: p.pred, timeout: opts.Timeout,
		bookmarks: opts.AllowWatchBookmarks, endBookmark: p.endBookmark,
		in:  make(chan *cacheEvent, c.s.cfg.WatchBuffer),
		out: make(chan watch.Event), done: make(chan struct{}),
		seen: c.rev,
	}
	switch p.start {
	case startInitial:
		w.initial = c.listLocked(prefix, listPlan{pred: p.pred}).items
	case startAfter:
		w.minRev = p.rv
		w.replay = c.hist.after(p.rv)
		w.seen = max(p.rv, w.sentRevOf(w.replay))
		w.sent = w.seen
	default:
		w.sent = c.rev
	}
	c.nextID++
	w.id = c.nextID
	c.watchers[w.id] = w
	w.ctx = ctx // ResultChan's goroutine, if it is read that way
	return w, nil
}

// expiredWatch is a watch whose only event is the 410 Expired Status.
func expiredWatch(rv, oldest int64) watch.Interface {
	st := apierrors.NewResourceExpired(fmt.Sprintf("too old resource version: %d (%d)", rv, oldest)).Status()
	ch := make(chan watch.Event, 1)
	ch <- watch.Event{Type: watch.Error, Object: &st}
	close(ch)
	return &closedWatch{ch: ch}
}

type closedWatch struct {
	ch chan watch.Event
}

// Stop implements watch.Interface; the stream has already ended.
func (w *closedWatch) Stop() {}

// ResultChan implements watch.Interface.
func (w *closedWatch) ResultChan() <-chan watch.Event { return w.ch }

// bookmarkObject is a BOOKMARK event's object: only apiVersion, kind and
// metadata.resourceVersion (and the initial-events-end annotation).
func (s *Store) bookmarkObject(rev int64, initialEnd bool) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	u.SetAPIVersion(s.cfg.Kind.GroupVersion().String())
	u.SetKind(s.cfg.Kind.Kind)
	u.SetResourceVersion(strconv.FormatInt(rev, 10))
	if initialEnd {
		u.SetAnnotations(map[string]string{InitialEventsAnnotation: "true"})
	}
	return u
}

// bookmarkLead is how long before a watch's timeout its last bookmark goes
// out: about two seconds, less for short watches.
func bookmarkLead(timeout time.Duration) time.Duration {
	if timeout > 8*time.Second {
		return 2 * time.Second
	}
	return timeout / 4
}
