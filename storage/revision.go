package storage

import (
	"context"
	"sync"
	"time"
)

// revisionReader reads etcd's current revision for consistent reads served
// from the watch cache, sharing one quorum read among concurrent callers.
//
// A caller may only use a read that started after it arrived: a read that
// was already in flight may predate a write the caller has seen
// acknowledged, and serving that older revision would break
// linearizability. So a caller joins the read in flight only when none is;
// otherwise it joins the next one, which starts when the one in flight ends
// and serves every caller that arrived meanwhile. etcd then sees at most one
// revision read at a time per store, however many requests wait on it.
type revisionReader struct {
	read    func(ctx context.Context) (int64, error)
	timeout time.Duration // of one read, which no single caller's context bounds

	mu       sync.Mutex
	inFlight *revisionRead // started; nil when idle
	next     *revisionRead // waiting for inFlight to end; nil when none
}

// revisionRead is one shared read: done closes when rev and err are set.
type revisionRead struct {
	done    chan struct{}
	rev     int64
	err     error
	callers int // that joined it, under revisionReader.mu
}

// current returns a revision read after the call began.
func (r *revisionReader) current(ctx context.Context) (int64, error) {
	r.mu.Lock()
	var rd *revisionRead
	switch {
	case r.inFlight == nil:
		rd = &revisionRead{done: make(chan struct{})}
		r.inFlight = rd
		go r.run(rd)
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
func (r *revisionReader) run(rd *revisionRead) {
	for rd != nil {
		ctx, cancel := context.WithTimeout(context.Background(), r.timeout)
		rd.rev, rd.err = r.read(ctx)
		cancel()
		close(rd.done)
		r.mu.Lock()
		rd, r.inFlight, r.next = r.next, r.next, nil
		r.mu.Unlock()
	}
}
