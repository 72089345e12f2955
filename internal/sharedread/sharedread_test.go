package sharedread

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestReaderSharesOnlyLaterReads: callers that arrive while a read
// is in flight do not take its answer (it may predate them) but share the
// next read, which starts once the first ends; an idle reader starts a read
// at once.
func TestReaderSharesOnlyLaterReads(t *testing.T) {
	var reads atomic.Int64
	release := make(chan struct{})
	started := make(chan int64, 4)
	r := New(func(ctx context.Context) (int64, error) {
		n := reads.Add(1)
		started <- n
		<-release
		return 100 * n, nil
	}, time.Minute)
	ctx := context.Background()
	first := make(chan int64)
	go func() { rev, _ := r.Current(ctx); first <- rev }()
	if n := <-started; n != 1 {
		t.Fatalf("first read started as read %d", n)
	}
	later := call(ctx, r, 5)
	waitJoined(t, r, func() bool { return r.next != nil && r.next.callers == 5 })
	release <- struct{}{}
	if rev := <-first; rev != 100 {
		t.Fatalf("first caller got %d, want 100", rev)
	}
	if n := <-started; n != 2 {
		t.Fatalf("second read started as read %d", n)
	}
	release <- struct{}{}
	for i, rev := range later() {
		if rev != 200 {
			t.Fatalf("caller %d arriving during read 1 got %d, want 200 (read 2)", i, rev)
		}
	}
	if n := reads.Load(); n != 2 {
		t.Fatalf("%d reads for 6 callers, want 2", n)
	}
	close(release)
	if rev, err := r.Current(ctx); rev != 300 || err != nil {
		t.Fatalf("idle reader: got %d, %v; want 300 from a new read", rev, err)
	}
}

// TestReaderJoinsReadNotStarted: callers that arrive while a read is
// yielding, before it reads, join it: the read begins after every one of
// them arrived, so it may serve them all.
func TestReaderJoinsReadNotStarted(t *testing.T) {
	var reads atomic.Int64
	r := New(func(ctx context.Context) (int64, error) { return 100 * reads.Add(1), nil }, time.Minute)
	hold := make(chan struct{})
	r.yield = func() { <-hold }
	got := call(context.Background(), r, 6)
	waitJoined(t, r, func() bool { return r.inFlight != nil && r.inFlight.callers == 6 && r.next == nil })
	close(hold)
	for i, rev := range got() {
		if rev != 100 {
			t.Fatalf("caller %d got %d, want 100 (the one read)", i, rev)
		}
	}
	if n := reads.Load(); n != 1 {
		t.Fatalf("%d reads for 6 callers that arrived before the read started, want 1", n)
	}
}

// TestReaderErrorsAndCancel: a failed read's error reaches its
// callers, and a caller whose context ends stops waiting.
func TestReaderErrorsAndCancel(t *testing.T) {
	boom := errors.New("etcd unavailable")
	r := New(func(context.Context) (int64, error) { return 0, boom }, time.Minute)
	if _, err := r.Current(context.Background()); !errors.Is(err, boom) {
		t.Fatalf("got %v, want %v", err, boom)
	}
	block := make(chan struct{})
	defer close(block)
	r = New(func(context.Context) (int64, error) { <-block; return 1, nil }, time.Minute)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := r.Current(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v, want %v", err, context.DeadlineExceeded)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("condition not met in 5s")
		}
	}
}

// call starts n concurrent calls of r.Current; the function it returns
// waits for them and returns what each got.
func call(ctx context.Context, r *Reader, n int) func() []int64 {
	var wg sync.WaitGroup
	revs := make([]int64, n)
	for i := range revs {
		wg.Go(func() { revs[i], _ = r.Current(ctx) })
	}
	return func() []int64 { wg.Wait(); return revs }
}

// waitJoined waits until joined, called under r's lock, holds.
func waitJoined(t *testing.T, r *Reader, joined func() bool) {
	t.Helper()
	waitFor(t, func() bool { r.mu.Lock(); defer r.mu.Unlock(); return joined() })
}
