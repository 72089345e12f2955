package server

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
)

// recorder makes steps that write what they do into one log.
type recorder struct{ log []string }

func (r *recorder) step(name string, startErr, stopErr error) step {
	return step{name: name,
		start: func(context.Context) error {
			r.log = append(r.log, "start "+name)
			return startErr
		},
		stop: func(context.Context) error {
			r.log = append(r.log, "stop "+name)
			return stopErr
		}}
}

func TestSequenceStopsInReverseAtShutdown(t *testing.T) {
	r := &recorder{}
	var done []string
	seq := &sequence{done: func(name string) { done = append(done, name) }}
	if err := seq.start(context.Background(), r.step("a", nil, nil), r.step("b", nil, nil)); err != nil {
		t.Fatal(err)
	}
	// A second start adds its steps after the first's, as Start does after etcd.
	if err := seq.start(context.Background(), r.step("c", nil, nil), step{name: "no stop", start: func(context.Context) error { return nil }}); err != nil {
		t.Fatal(err)
	}
	if err := seq.stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	want := []string{"start a", "start b", "start c", "stop c", "stop b", "stop a"}
	if !slices.Equal(r.log, want) {
		t.Errorf("log %q, want %q", r.log, want)
	}
	if want := []string{"a", "b", "c", "no stop"}; !slices.Equal(done, want) {
		t.Errorf("done %q, want %q", done, want)
	}
	r.log = nil
	if err := seq.stop(context.Background()); err != nil || len(r.log) != 0 {
		t.Errorf("a second stop: %v, log %q; want nothing stopped twice", err, r.log)
	}
}

func TestSequenceStopsInReverseWhenAStepFails(t *testing.T) {
	r := &recorder{}
	boom := errors.New("boom")
	var done []string
	seq := &sequence{done: func(name string) { done = append(done, name) }}
	err := seq.start(context.Background(), r.step("a", nil, nil), r.step("b", nil, nil), r.step("c", boom, nil), r.step("d", nil, nil))
	if err != boom {
		t.Errorf("start: %v, want the failed step's error as it is", err)
	}
	// The failed step cleans up after itself: its stop is not called.
	want := []string{"start a", "start b", "start c", "stop b", "stop a"}
	if !slices.Equal(r.log, want) {
		t.Errorf("log %q, want %q", r.log, want)
	}
	if want := []string{"a", "b"}; !slices.Equal(done, want) {
		t.Errorf("done %q, want %q", done, want)
	}
}

func TestSequenceFailedStopStopsTheRest(t *testing.T) {
	r := &recorder{}
	stuck, late := errors.New("stuck"), errors.New("late")
	seq := &sequence{}
	if err := seq.start(context.Background(), r.step("a", nil, late), r.step("b", nil, nil), r.step("c", nil, stuck)); err != nil {
		t.Fatal(err)
	}
	err := seq.stop(context.Background())
	want := []string{"start a", "start b", "start c", "stop c", "stop b", "stop a"}
	if !slices.Equal(r.log, want) {
		t.Errorf("log %q, want %q", r.log, want)
	}
	if !errors.Is(err, stuck) || !errors.Is(err, late) {
		t.Errorf("stop: %v, want both stops' errors", err)
	}
	if err == nil || !strings.Contains(err.Error(), "stopping c: stuck") || !strings.Contains(err.Error(), "stopping a: late") {
		t.Errorf("stop: %v, want each error named by its step", err)
	}
	// On a failed start too, a failing stop does not skip the others, and
	// its error comes back with the start's.
	r, boom := &recorder{}, errors.New("boom")
	seq = &sequence{}
	err = seq.start(context.Background(), r.step("a", nil, nil), r.step("b", nil, stuck), r.step("c", boom, nil))
	if want := []string{"start a", "start b", "start c", "stop b", "stop a"}; !slices.Equal(r.log, want) {
		t.Errorf("log %q, want %q", r.log, want)
	}
	if !errors.Is(err, boom) || !errors.Is(err, stuck) {
		t.Errorf("start: %v, want the start's and the stop's errors", err)
	}
}

// A start that fails because its context ended still has its stops run
// with a live context (a graceful stop may need one).
func TestSequenceStopsWithLiveContextAfterCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var stopCtxErr error = errors.New("not stopped")
	seq := &sequence{}
	err := seq.start(ctx,
		step{name: "a", start: func(context.Context) error { return nil },
			stop: func(ctx context.Context) error { stopCtxErr = ctx.Err(); return nil }},
		step{name: "b", start: func(ctx context.Context) error { cancel(); return ctx.Err() }})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("start: %v, want context.Canceled", err)
	}
	if stopCtxErr != nil {
		t.Errorf("stop's context: %v, want live", stopCtxErr)
	}
}
