package storage

import (
	"sort"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
)

// cacheEvent is one change seen by the watch cache, shared by every watcher.
// A watch.Bookmark event is a progress marker: nothing changed, but the
// cache has seen every change up to rev.
type cacheEvent struct {
	typ  watch.EventType
	key  string
	obj  *unstructured.Unstructured // new state; for DELETED the last state at the deletion revision
	prev *unstructured.Unstructured // state before the change; nil for ADDED
	rev  int64
}

// eventRing is the watch cache's bounded history, oldest first.
type eventRing struct {
	buf  []*cacheEvent
	head int // index of the oldest event
	n    int
}

func newEventRing(capacity int) *eventRing {
	return &eventRing{buf: make([]*cacheEvent, capacity)}
}

// push appends e and returns the event it evicted, if the ring was full.
func (r *eventRing) push(e *cacheEvent) *cacheEvent {
	if r.n < len(r.buf) {
		r.buf[(r.head+r.n)%len(r.buf)] = e
		r.n++
		return nil
	}
	old := r.buf[r.head]
	r.buf[r.head] = e
	r.head = (r.head + 1) % len(r.buf)
	return old
}

func (r *eventRing) at(i int) *cacheEvent { return r.buf[(r.head+i)%len(r.buf)] }

// after returns the events with a revision above rev, oldest first.
func (r *eventRing) after(rev int64) []*cacheEvent {
	i := sort.Search(r.n, func(i int) bool { return r.at(i).rev > rev })
	out := make([]*cacheEvent, 0, r.n-i)
	for ; i < r.n; i++ {
		out = append(out, r.at(i))
	}
	return out
}

func (r *eventRing) reset() {
	clear(r.buf)
	r.head, r.n = 0, 0
}
