package proc

import (
	"context"
	"fmt"
	"time"
)

// A server's memory at the moment it turns ready is not what it holds a
// few seconds later: strata's in-process controllers list into their
// informers and its OpenAPI documents are built only once it serves, and
// kube-apiserver runs post-start hooks of its own; a reading taken at
// readiness understates what the server settles at by a wide margin
// (bench/README.md). So the footprint reads each process's RSS once it has
// settled: sampled every rssPoll until no sample has grown more than
// rssGrowth over the first of a quiet window of rssQuiet, or rssBound has
// passed.
const (
	rssPoll   = 250 * time.Millisecond
	rssQuiet  = 3 * time.Second
	rssGrowth = 0.01
	rssBound  = 30 * time.Second
)

// rssSettler decides, from successive samples of some processes' RSS,
// when they have settled.
type rssSettler struct {
	quiet  int     // samples in a quiet window
	growth float64 // most growth over the window's first sample
	ref    []int64 // the window's first sample, per process
	n      int     // samples in the window so far
}

func newRSSSettler() *rssSettler {
	return &rssSettler{quiet: int(rssQuiet / rssPoll), growth: rssGrowth}
}

// add takes one sample (one RSS per process, in the same order each time)
// and reports whether the processes have now settled.
func (s *rssSettler) add(sample []int64) bool {
	grew := s.ref == nil
	for i := range s.ref {
		if float64(sample[i]) > float64(s.ref[i])*(1+s.growth) {
			grew = true
		}
	}
	if grew {
		s.ref, s.n = sample, 0
	}
	s.n++
	return s.n > s.quiet
}

// SettledRSS is the RSS in MB of each of procs (nil entries are skipped
// and read as 0) once they have settled together, or at rssBound.
func SettledRSS(ctx context.Context, procs ...*Process) ([]float64, error) {
	s := newRSSSettler()
	deadline := time.Now().Add(rssBound)
	t := time.NewTicker(rssPoll)
	defer t.Stop()
	for {
		sample := make([]int64, len(procs))
		for i, p := range procs {
			if p == nil {
				continue
			}
			b, err := RSS(p.Pid())
			if err != nil {
				return nil, err
			}
			sample[i] = b
		}
		if s.add(sample) || time.Now().After(deadline) {
			mb := make([]float64, len(sample))
			for i, b := range sample {
				mb[i] = float64(b) / (1 << 20)
			}
			return mb, nil
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("proc: waiting for the RSS to settle: %w", ctx.Err())
		case <-t.C:
		}
	}
}
