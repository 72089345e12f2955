// Package sharedread shares one read of a changing value (etcd's current
// revision) among concurrent callers, each answered by a read that began
// after it arrived: what a linearizable read served from a cache needs,
// at one read in flight however many callers wait.
package sharedread

import (
	"context"
	"runtime"
	"sync"
	"time"
)

// Reader shares one read among concurrent callers (storage's consistent
// reads served from the watch cache read etcd's revision through one).
//
// A caller may only use a read that started after it arrived: a read that
// was already in flight may predate a write the caller has seen
// acknowledged, and serving that older revision would break
// linearizability. So a caller joins the read in flight only while it has
// not started; otherwise it joins the next one, which starts when the one
// in flight ends and serves every caller that arrived meanwhile. etcd then
// sees at most one revision read at a time per store, however many
// requests wait on it.
//
// A read yields the processor once before it starts: requests that arrive
// together (one HTTP/2 read of several streams' frames) have their
// handlers made runnable together, and the yield lets them reach Current
// and join the read instead of waiting for the next.
type Reader struct {
	read    func(ctx context.Context) (int64, error)
	timeout time.Duration // of one read, which no single caller's context bounds
	// yield runs before each read starts (runtime.Gosched; tests hold it).
	yield func()

	mu       sync.Mutex
	inFlight *revisionRead // the read under way (maybe not started); nil when idle
	next     *revisionRead // waiting for inFlight to end; nil when none
}

// New returns a Reader whose reads call read, each bounded by timeout
// (no single caller's context bounds a read others share).
func New(read func(ctx context.Context) (int64, error), timeout time.Duration) *Reader {
	return &Reader{read: read, timeout: timeout, yield: runtime.Gosched}
}

// revisionRead is one shared read: done closes when rev and err are set.
type revisionRead struct {
	done    chan struct{}
	rev     int64
	err     error
	callers int  // that joined it, under Reader.mu
	started bool // under Reader.mu: too late to join
}

// Current returns a value read after the call began.
func (r *Reader) Current(ctx context.Context) (int64, error) {
	r.mu.Lock()
	var rd *revisionRead
	switch {
	case r.inFlight == nil:
		rd = &revisionRead{done: make(chan struct{})}
		r.inFlight = rd
		go r.run(rd)
	case !r.inFlight.started:
		rd = r.inFlight
	case r.next == nil:
		r.next = &revisionRead{done: make(chan struct{})}
		rd = r.next
	default:
		rd = r.next
	}
	rd.callers++
	r.mu.Unlock()
	select {
	case <-rd.done:
		return rd.rev, rd.err
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}

// run performs rd, then starts the read that waited for it, if any.
func (r *Reader) run(rd *revisionRead) {
	for rd != nil {
		r.yield()
		r.mu.Lock()
		rd.started = true
		r.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), r.timeout)
		rd.rev, rd.err = r.read(ctx)
		cancel()
		close(rd.done)
		r.mu.Lock()
		rd, r.inFlight, r.next = r.next, r.next, nil
		r.mu.Unlock()
	}
}
