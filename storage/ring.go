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
	// size is what the event holds in the history, in stored bytes: its
	// key and the stored JSON of obj (prev is the previous event's obj).
	size int64
}

// eventRing is the watch cache's bounded history, oldest first. It keeps
// at most capacity events and at most maxBytes of their sizes.
//
// buf grows as events come, up to capacity: a server has a ring per
// resource, most of which see few writes, and a full buffer of each would
// be ~80 KB of pointers per resource at the default capacity.
type eventRing struct {
	buf      []*cacheEvent
	head     int // index of the oldest event
	n        int
	bytes    int64 // sum of the kept events' sizes
	capacity int
	maxBytes int64
}

// ringStart is the length of a ring's first buffer.
const ringStart = 16

func newEventRing(capacity int, maxBytes int64) *eventRing {
	return &eventRing{buf: make([]*cacheEvent, min(capacity, ringStart)), capacity: capacity, maxBytes: maxBytes}
}

// grow doubles buf (up to capacity), the oldest event first in it.
func (r *eventRing) grow() {
	buf := make([]*cacheEvent, min(2*len(r.buf), r.capacity))
	for i := range r.n {
		buf[i] = r.at(i)
	}
	r.buf, r.head = buf, 0
}

// push appends e, evicting the oldest events as the bounds require, and
// returns the newest revision it dropped (0: none): watches can start only
// from it on. An event larger than maxBytes on its own is not kept.
func (r *eventRing) push(e *cacheEvent) (dropped int64) {
	if e.size > r.maxBytes {
		r.reset()
		return e.rev
	}
	if r.n == len(r.buf) && len(r.buf) < r.capacity {
		r.grow()
	}
	for r.n > 0 && (r.n == len(r.buf) || r.bytes+e.size > r.maxBytes) {
		dropped = r.popOldest().rev
	}
	r.buf[(r.head+r.n)%len(r.buf)] = e
	r.n++
	r.bytes += e.size
	return dropped
}

func (r *eventRing) popOldest() *cacheEvent {
	old := r.buf[r.head]
	r.buf[r.head] = nil
	r.head = (r.head + 1) % len(r.buf)
	r.n--
	r.bytes -= old.size
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
	r.head, r.n, r.bytes = 0, 0, 0
}
