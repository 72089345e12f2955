package cell

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"
)

// TestRunStopsAtMaxOps: a cell starts at most maxOps operations, numbered
// from first, and counts the failed ones apart from the latencies.
func TestRunStopsAtMaxOps(t *testing.T) {
	var started atomic.Int64
	seen := make([]atomic.Bool, 100)
	res := Run(context.Background(), 4, time.Minute, 10, 50, func(_ context.Context, c Call) error {
		started.Add(1)
		seen[c.I].Store(true)
		if c.I%10 == 0 {
			return errors.New("every tenth fails")
		}
		return nil
	})
	if started.Load() != 50 {
		t.Errorf("started %d operations, want 50", started.Load())
	}
	for i := range seen {
		if want := i >= 10 && i < 60; seen[i].Load() != want {
			t.Errorf("operation %d run: %v, want %v", i, seen[i].Load(), want)
		}
	}
	if res.Errors != 5 || len(res.Latencies) != 45 || res.FirstErr == nil {
		t.Errorf("errors %d, latencies %d, first error %v; want 5, 45 and an error", res.Errors, len(res.Latencies), res.FirstErr)
	}
}

// TestRunStopsAtDuration: a cell whose operations outlast its duration
// stops starting new ones.
func TestRunStopsAtDuration(t *testing.T) {
	res := Run(context.Background(), 1, 50*time.Millisecond, 0, 1<<30, func(context.Context, Call) error {
		time.Sleep(10 * time.Millisecond)
		return nil
	})
	if n := len(res.Latencies); n == 0 || n > 10 {
		t.Errorf("%d operations in 50 ms of 10 ms each, want 1 to 10", n)
	}
}

// TestPercentilesMs: nearest rank, in milliseconds.
func TestPercentilesMs(t *testing.T) {
	lat := make([]time.Duration, 100)
	for i := range lat {
		lat[len(lat)-1-i] = time.Duration(i+1) * time.Millisecond
	}
	if p50, p99 := PercentilesMs(lat); p50 != 50 || p99 != 99 {
		t.Errorf("p50 %v, p99 %v; want 50 and 99", p50, p99)
	}
	if p50, p99 := PercentilesMs(nil); p50 != 0 || p99 != 0 {
		t.Errorf("no latencies: p50 %v, p99 %v; want 0", p50, p99)
	}
}

// TestAddMergesRounds: the rounds of a cell add up, CPU time included.
func TestAddMergesRounds(t *testing.T) {
	cpu := func(d time.Duration) *time.Duration { return &d }
	var sum Result
	sum.Add(Result{Elapsed: time.Second, Latencies: []time.Duration{1, 2}, CPU: cpu(3 * time.Millisecond)})
	sum.Add(Result{Elapsed: time.Second, Latencies: []time.Duration{3}, Errors: 1, FirstErr: errors.New("x"), CPU: cpu(time.Millisecond)})
	row := sum.Row("strata", "get", 16)
	if row.Ops != 3 || row.Errors != 1 || row.PerSec != 1.5 || row.FirstError != "x" {
		t.Errorf("row %+v: want 3 ops, 1 error, 1.5/s, first error x", row)
	}
	if row.ServerCPUUsPerOp == nil || *row.ServerCPUUsPerOp < 1333 || *row.ServerCPUUsPerOp > 1334 {
		t.Errorf("CPU per op %v, want 4 ms ÷ 3", row.ServerCPUUsPerOp)
	}
}
