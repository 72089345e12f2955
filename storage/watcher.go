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
// events into in; Next filters them by namespace prefix and selectors and
// returns them, in its caller's goroutine. A watcher read through
// ResultChan runs Next on a goroutine of its own and delivers on out.
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
	running sync.Once // the ResultChan goroutine
	initial []unstructured.Unstructured
	replay  []*cacheEvent
	minRev  int64 // events at or below are not delivered
	seen    int64 // every change up to seen has been processed
	sent    int64 // revision of the last event or bookmark delivered

	// Next's progress: through initial, through replay, then following in
	// with its timers, then ended.
	phase  watchPhase
	next   int          // of initial or replay
	ticker *time.Ticker // bookmarks, when asked for
	// end is the timeout, when there is one; lead the last bookmark
	// before it, when bookmarks are asked for too.
	end, lead *time.Timer
	ctx       context.Context // of the ResultChan goroutine
}

type watchPhase int

const (
	phaseInitial watchPhase = iota
	phaseReplay
	phaseFollow
	phaseEnded
)

// Stop implements watch.Interface.
func (w *cacheWatcher) Stop() {
	w.stop.Do(func() { close(w.done) })
	w.cache.remove(w.id)
}

// ResultChan implements watch.Interface: the first call starts the
// goroutine that delivers on it. A watcher is read either through it or
// through Next, never both.
func (w *cacheWatcher) ResultChan() <-chan watch.Event {
	w.running.Do(func() { go w.run(w.ctx) })
	return w.out
}

func (w *cacheWatcher) sentRevOf(events []*cacheEvent) int64 {
	if len(events) == 0 {
		return 0
	}
	return events[len(events)-1].rev
}

// run delivers Next's events on out until the watch ends.
func (w *cacheWatcher) run(ctx context.Context) {
	defer close(w.out)
	for {
		ev, ok := w.Next(ctx)
		if !ok {
			return
		}
		select {
		case w.out <- ev:
		case <-w.done:
			w.finish()
			return
		case <-ctx.Done():
			w.finish()
			return
		}
	}
}

// Next returns the next event the watcher's client should see: the
// initial state as ADDED events and, when asked, the initial-events-end
// bookmark at the snapshot's revision; the replayed history; then changes
// and bookmarks until the watch ends (its timeout, Stop, ctx, or the cache
// ending it), when it returns false. The API server's handler calls it
// directly: an event a watch cache hands to its watchers then wakes one
// goroutine per watcher before HTTP/2's, instead of two.
func (w *cacheWatcher) Next(ctx context.Context) (watch.Event, bool) {
	for {
		switch w.phase {
		case phaseInitial:
			if w.next < len(w.initial) {
				w.next++
				return watch.Event{Type: watch.Added, Object: &w.initial[w.next-1]}, true
			}
			w.initial, w.next, w.phase = nil, 0, phaseReplay
			if w.endBookmark {
				w.sent = w.seen
				return watch.Event{Type: watch.Bookmark, Object: w.cache.s.bookmarkObject(w.seen, true)}, true
			}
		case phaseReplay:
			if w.next < len(w.replay) {
				w.next++
				if ev, ok := w.process(w.replay[w.next-1]); ok {
					return ev, true
				}
				continue
			}
			w.replay, w.next, w.phase = nil, 0, phaseFollow
			w.startTimers()
		case phaseFollow:
			if ev, ok := w.follow(ctx); ok {
				return ev, true
			}
		case phaseEnded:
			return watch.Event{}, false
		}
	}
}

// startTimers starts the bookmark ticker and the timeout's timers.
func (w *cacheWatcher) startTimers() {
	if w.bookmarks {
		w.ticker = time.NewTicker(w.cache.s.cfg.BookmarkInterval)
	}
	if w.timeout > 0 {
		w.end = time.NewTimer(w.timeout)
		if w.bookmarks {
			w.lead = time.NewTimer(w.timeout - bookmarkLead(w.timeout))
		}
	}
}

// follow waits for the next change or timer and returns the event it
// makes, if any; when the watch ends instead, it finishes it.
func (w *cacheWatcher) follow(ctx context.Context) (watch.Event, bool) {
	var tick, lead, end <-chan time.Time // nil: never ready
	if w.ticker != nil {
		tick = w.ticker.C
	}
	if w.lead != nil {
		lead = w.lead.C
	}
	if w.end != nil {
		end = w.end.C
	}
	select {
	case ce, open := <-w.in:
		if open {
			return w.process(ce)
		}
	case <-tick:
		return w.bookmark(false)
	case <-lead:
		return w.bookmark(true)
	case <-end:
	case <-w.done:
	case <-ctx.Done():
	}
	w.finish()
	return watch.Event{}, false
}

// finish ends the watch: its timers stop and the cache forgets it.
func (w *cacheWatcher) finish() {
	if w.phase == phaseEnded {
		return
	}
	w.phase = phaseEnded
	if w.ticker != nil {
		w.ticker.Stop()
	}
	for _, t := range []*time.Timer{w.end, w.lead} {
		if t != nil {
			t.Stop()
		}
	}
	w.cache.remove(w.id)
}

// process is the event one cache event is for the watcher's client, if
// any.
func (w *cacheWatcher) process(ev *cacheEvent) (watch.Event, bool) {
	if ev.rev <= w.minRev {
		return watch.Event{}, false
	}
	w.seen = max(w.seen, ev.rev)
	if ev.typ == watch.Bookmark || !strings.HasPrefix(ev.key, w.prefix) {
		return watch.Event{}, false
	}
	out, ok := w.translate(ev)
	if ok {
		w.sent = ev.rev
	}
	return out, ok
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

// bookmark is a BOOKMARK at the newest revision processed, if it moved
// past the last event sent (always, for the one before the timeout).
func (w *cacheWatcher) bookmark(final bool) (watch.Event, bool) {
	if w.seen == 0 || (!final && w.seen <= w.sent) {
		return watch.Event{}, false
	}
	w.sent = w.seen
	return watch.Event{Type: watch.Bookmark, Object: w.cache.s.bookmarkObject(w.seen, false)}, true
}
