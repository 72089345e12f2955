// Package cell runs the bench's cells: one operation from a number of
// clients for a bounded time or count, with each operation's latency, the
// errors, and the server process's CPU time over the cell.
package cell

import (
	"context"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/stratadev/strata/bench/internal/proc"
	"github.com/stratadev/strata/bench/report"
)

// Call identifies one operation of a cell: the cell's concurrency (0 for
// warmup), the client running it and the operation's index in the cell.
type Call struct{ Conc, Worker, I int }

// Result is what one cell measured.
type Result struct {
	Elapsed   time.Duration
	Latencies []time.Duration // of the successful operations
	Errors    int
	FirstErr  error
	// CPU is the server process's CPU time over the cell (nil: not
	// measured).
	CPU *time.Duration
}

// Run runs op from conc clients until maxOps operations have been
// started or d has passed, whichever comes first, and waits for those in
// flight. The operations are numbered from first.
func Run(ctx context.Context, conc int, d time.Duration, first, maxOps int, run func(context.Context, Call) error) Result {
	var (
		next     atomic.Int64
		mu       sync.Mutex
		res      Result
		wg       sync.WaitGroup
		perCl    = make([][]time.Duration, conc)
		start    = time.Now()
		deadline = start.Add(d)
	)
	for w := range conc {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= maxOps || ctx.Err() != nil || time.Now().After(deadline) {
					return
				}
				t := time.Now()
				err := run(ctx, Call{Conc: conc, Worker: w, I: first + i})
				lat := time.Since(t)
				if err == nil {
					perCl[w] = append(perCl[w], lat)
					continue
				}
				mu.Lock()
				res.Errors++
				if res.FirstErr == nil {
					res.FirstErr = err
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	res.Elapsed = time.Since(start)
	res.Latencies = slices.Concat(perCl...)
	return res
}

// Add merges another round of the same cell into c.
func (c *Result) Add(o Result) {
	c.Elapsed += o.Elapsed
	c.Latencies = append(c.Latencies, o.Latencies...)
	c.Errors += o.Errors
	if c.FirstErr == nil {
		c.FirstErr = o.FirstErr
	}
	if o.CPU != nil {
		sum := *o.CPU
		if c.CPU != nil {
			sum += *c.CPU
		}
		c.CPU = &sum
	}
}

// Measured runs cell and records process pid's CPU time over it (pid 0:
// nothing recorded).
func Measured(pid int, cell func() Result) (Result, error) {
	if pid == 0 {
		return cell(), nil
	}
	before, err := proc.CPU(pid)
	if err != nil {
		return Result{}, err
	}
	res := cell()
	after, err := proc.CPU(pid)
	if err != nil {
		return Result{}, err
	}
	d := after - before
	res.CPU = &d
	return res, nil
}

// Row summarises a cell as a report row.
func (c Result) Row(side, name string, conc int) report.Row {
	r := report.Row{Side: side, Op: name, Concurrency: conc, Ops: len(c.Latencies), Errors: c.Errors,
		Seconds: c.Elapsed.Seconds()}
	if c.FirstErr != nil {
		r.FirstError = c.FirstErr.Error()
	}
	if c.Elapsed > 0 {
		r.PerSec = float64(len(c.Latencies)) / c.Elapsed.Seconds()
	}
	r.P50Ms, r.P99Ms = PercentilesMs(c.Latencies)
	if c.CPU != nil && len(c.Latencies) > 0 {
		s := c.CPU.Seconds()
		us := float64(*c.CPU) / float64(time.Microsecond) / float64(len(c.Latencies))
		r.ServerCPUSeconds, r.ServerCPUUsPerOp = &s, &us
	}
	return r
}

// PercentilesMs returns the 50th and 99th percentiles (nearest rank) in
// milliseconds; it sorts lat.
func PercentilesMs(lat []time.Duration) (p50, p99 float64) {
	if len(lat) == 0 {
		return 0, 0
	}
	slices.Sort(lat)
	at := func(p float64) float64 {
		i := max(int(math.Ceil(p*float64(len(lat))))-1, 0)
		return float64(lat[i]) / float64(time.Millisecond)
	}
	return at(0.50), at(0.99)
}

// Parallel calls fn for 0..n-1 from par goroutines and returns the first
// error (the others are then not started).
func Parallel(ctx context.Context, n, par int, fn func(context.Context, int) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		next  atomic.Int64
		once  sync.Once
		first error
		wg    sync.WaitGroup
	)
	for range min(par, n) {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n || ctx.Err() != nil {
					return
				}
				if err := fn(ctx, i); err != nil {
					once.Do(func() { first = err; cancel() })
					return
				}
			}
		})
	}
	wg.Wait()
	if first != nil {
		return first
	}
	return ctx.Err()
}
