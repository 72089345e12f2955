package bench

import (
	"context"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// call identifies one operation of a cell: the cell's concurrency (0 for
// warmup), the client running it and the operation's index in the cell.
type call struct{ conc, worker, i int }

// op is one measured operation of one side (strata or etcd).
type op struct {
	side, name string
	// pid is the server process whose CPU time the cells read (0: none);
	// pidOf, when set, says it once the preparation has started the
	// server.
	pid   int
	pidOf func() int
	// prepare, when set, runs once before the operation's first cell.
	prepare func(context.Context) error
	run     func(context.Context, call) error
}

// serverPID is the process whose CPU time the operation's cells read.
func (o op) serverPID() int {
	if o.pidOf != nil {
		return o.pidOf()
	}
	return o.pid
}

// pair is a strata operation and the raw etcd operation it is compared
// to, with, for create, the floor: the same client and etcd operation
// through a server that does nothing else (floor.go).
type pair struct {
	strata, etcd op
	// more are further strata operations compared with the same etcd
	// operation (server-side apply beside strategic PATCH).
	more []op
	// floors are the floor's operations beside them.
	floors []op
}

// ops are the pair's operations in the order each round runs them.
func (p pair) ops() []op {
	ops := append([]op{p.strata, p.etcd}, p.more...)
	return append(ops, p.floors...)
}

// cellResult is what one cell measured.
type cellResult struct {
	elapsed   time.Duration
	latencies []time.Duration // of the successful operations
	errors    int
	firstErr  error
	// cpu is the server process's CPU time over the cell (nil: not
	// measured).
	cpu *time.Duration
}

// runCell runs op from conc clients until maxOps operations have been
// started or d has passed, whichever comes first, and waits for those in
// flight. The operations are numbered from first.
func runCell(ctx context.Context, conc int, d time.Duration, first, maxOps int, run func(context.Context, call) error) cellResult {
	var (
		next     atomic.Int64
		mu       sync.Mutex
		res      cellResult
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
				err := run(ctx, call{conc: conc, worker: w, i: first + i})
				lat := time.Since(t)
				if err == nil {
					perCl[w] = append(perCl[w], lat)
					continue
				}
				mu.Lock()
				res.errors++
				if res.firstErr == nil {
					res.firstErr = err
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	res.elapsed = time.Since(start)
	res.latencies = slices.Concat(perCl...)
	return res
}

// add merges another round of the same cell into c.
func (c *cellResult) add(o cellResult) {
	c.elapsed += o.elapsed
	c.latencies = append(c.latencies, o.latencies...)
	c.errors += o.errors
	if c.firstErr == nil {
		c.firstErr = o.firstErr
	}
	if o.cpu != nil {
		sum := *o.cpu
		if c.cpu != nil {
			sum += *c.cpu
		}
		c.cpu = &sum
	}
}

// measured runs cell and records process pid's CPU time over it (pid 0:
// nothing recorded).
func measured(pid int, cell func() cellResult) (cellResult, error) {
	if pid == 0 {
		return cell(), nil
	}
	before, err := procCPU(pid)
	if err != nil {
		return cellResult{}, err
	}
	res := cell()
	after, err := procCPU(pid)
	if err != nil {
		return cellResult{}, err
	}
	d := after - before
	res.cpu = &d
	return res, nil
}

// row summarises a cell as a report row.
func (c cellResult) row(side, name string, conc int) Row {
	r := Row{Side: side, Op: name, Concurrency: conc, Ops: len(c.latencies), Errors: c.errors,
		Seconds: c.elapsed.Seconds()}
	if c.firstErr != nil {
		r.FirstError = c.firstErr.Error()
	}
	if c.elapsed > 0 {
		r.PerSec = float64(len(c.latencies)) / c.elapsed.Seconds()
	}
	r.P50Ms, r.P99Ms = percentilesMs(c.latencies)
	if c.cpu != nil && len(c.latencies) > 0 {
		s := c.cpu.Seconds()
		us := float64(*c.cpu) / float64(time.Microsecond) / float64(len(c.latencies))
		r.ServerCPUSeconds, r.ServerCPUUsPerOp = &s, &us
	}
	return r
}

// percentilesMs returns the 50th and 99th percentiles (nearest rank) in
// milliseconds; it sorts lat.
func percentilesMs(lat []time.Duration) (p50, p99 float64) {
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

// parallel calls fn for 0..n-1 from par goroutines and returns the first
// error (the others are then not started).
func parallel(ctx context.Context, n, par int, fn func(context.Context, int) error) error {
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
