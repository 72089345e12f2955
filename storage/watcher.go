package storage

import (
	"context"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
)

// cacheWatcher is one client's watch on the cache. The cache pushes shared
// events into in; run filters them by namespace prefix and selectors and
// delivers them on out.
type cacheWatcher struct {
	id          uint64
	cache       *watchCache
	prefix      string
	pred        predicate
	timeout     time.Duration
	bookmarks   bool
	endBookmark bool

	in      chan *cacheEvent
	out     chan watch.Event
	done    chan struct{}
	stop    sync.Once
	initial []unstructured.Unstructured
	replay  []*cacheEvent
	minRev  int64 // events at or below are not delivered
	seen    int64 // every change up to seen has been processed
	sent    int64 // revision of the last event or bookmark delivered
}

// Stop implements watch.Interface.
func (w *cacheWatcher) Stop() {
	w.stop.Do(func() { close(w.done) })
	w.cache.remove(w.id)
}

// ResultChan implements watch.Interface.
func (w *cacheWatcher) ResultChan() <-chan watch.Event { return w.out }

func (w *cacheWatcher) sentRevOf(events []*cacheEvent) int64 {
	if len(events) == 0 {
		return 0
	}
	return events[len(events)-1].rev
}

func (w *cacheWatcher) run(ctx context.Context) {
	defer close(w.out)
	defer w.cache.remove(w.id)
	if !w.sendInitial(ctx) {
		return
	}
	for _, ev := range w.replay {
		if !w.process(ctx, ev) {
			return
		}
	}
	w.replay = nil
	w.loop(ctx)
}

// sendInitial delivers the initial state as ADDED events and, when asked,
// the initial-events-end bookmark at the snapshot's revision.
func (w *cacheWatcher) sendInitial(ctx context.Context) bool {
	for i := range w.initial {
		if !w.send(ctx, watch.Event{Type: watch.Added, Object: &w.initial[i]}) {
			return false
		}
	}
	w.initial = nil
	if !w.endBookmark {
		return true
	}
	w.sent = w.seen
	return w.send(ctx, watch.Event{Type: watch.Bookmark, Object: w.cache.s.bookmarkObject(w.seen, true)})
}

// loop delivers events and bookmarks until the watch ends.
func (w *cacheWatcher) loop(ctx context.Context) {
	var tick, lead, end <-chan time.Time
	if w.bookmarks {
		t := time.NewTicker(w.cache.s.cfg.BookmarkInterval)
		defer t.Stop()
		tick = t.C
	}
	if w.timeout > 0 {
		te := time.NewTimer(w.timeout)
		defer te.Stop()
		end = te.C
		if w.bookmarks {
			tl := time.NewTimer(w.timeout - bookmarkLead(w.timeout))
			defer tl.Stop()
			lead = tl.C
		}
	}
	for {
		ok := true
		select {
		case ev, open := <-w.in:
			ok = open && w.process(ctx, ev)
		case <-tick:
			ok = w.bookmark(ctx, false)
		case <-lead:
			ok = w.bookmark(ctx, true)
		case <-end:
			return
		case <-w.done:
			return
		case <-ctx.Done():
			return
		}
		if !ok {
			return
		}
	}
}

// process delivers one cache event as the watcher's client should see it.
func (w *cacheWatcher) process(ctx context.Context, ev *cacheEvent) bool {
	if ev.rev <= w.minRev {
		return true
	}
	w.seen = max(w.seen, ev.rev)
	if ev.typ == watch.Bookmark || !strings.HasPrefix(ev.key, w.prefix) {
		return true
	}
	out, ok := w.translate(ev)
	if !ok {
		return true
	}
	w.sent = ev.rev
	return w.send(ctx, out)
}

// translate applies the selectors: an object that leaves them is DELETED
// with its previous content, one that enters them is ADDED.
func (w *cacheWatcher) translate(ev *cacheEvent) (watch.Event, bool) {
	if w.pred.empty() {
		return watch.Event{Type: ev.typ, Object: ev.obj}, true
	}
	if ev.typ == watch.Deleted {
		return watch.Event{Type: watch.Deleted, Object: ev.obj}, w.pred.matches(ev.prev)
	}
	now, before := w.pred.matches(ev.obj), ev.prev != nil && w.pred.matches(ev.prev)
	switch {
	case now && before:
		return watch.Event{Type: watch.Modified, Object: ev.obj}, true
	case now:
		return watch.Event{Type: watch.Added, Object: ev.obj}, true
	case before:
		return watch.Event{Type: watch.Deleted, Object: withResourceVersion(ev.prev, ev.rev)}, true
	}
	return watch.Event{}, false
}

// bookmark sends a BOOKMARK at the newest revision processed, if it moved
// past the last event sent (always, for the one before the timeout).
func (w *cacheWatcher) bookmark(ctx context.Context, final bool) bool {
	if w.seen == 0 || (!final && w.seen <= w.sent) {
		return true
	}
	w.sent = w.seen
	return w.send(ctx, watch.Event{Type: watch.Bookmark, Object: w.cache.s.bookmarkObject(w.seen, false)})
}

func (w *cacheWatcher) send(ctx context.Context, ev watch.Event) bool {
	select {
	case w.out <- ev:
		return true
	case <-w.done:
		return false
	case <-ctx.Done():
		return false
	}
}
