package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Each start-up of the footprint is the median of Config.FootprintStarts
// starts. One start on two shared cores varies by a third: the embedded
// etcd member's first start on a new directory took 0.1 to 0.4 s from one
// start to the next, and strata's empty start-up 0.58 to 0.92 s. The
// footprint's rounds (footprint.go) make the first sample of each setting,
// and the memory readings; the other starts follow them, each stopped once
// ready: an empty start on a new directory, removed after it, and a
// restart on the loaded one.

// Start-up settings, the keys of FootprintRow.StartRuns.
const (
	runEmpty       = "empty"
	runLoaded      = "loaded"
	runEtcdEmpty   = "etcd empty"
	runEtcdLoaded  = "etcd loaded"
	defaultStarts  = 3
	startRunsOrder = "empty, loaded, etcd empty, etcd loaded"
)

// addStart records one start-up of setting and sets the row's figure for
// it to the median of those recorded.
func (f *FootprintRow) addStart(setting string, seconds float64) {
	if f.StartRuns == nil {
		f.StartRuns = map[string][]float64{}
	}
	f.StartRuns[setting] = append(f.StartRuns[setting], seconds)
	m := median(f.StartRuns[setting])
	switch setting {
	case runEmpty:
		f.StartEmptySeconds = m
	case runLoaded:
		f.StartLoadedSeconds = m
	case runEtcdEmpty:
		f.EtcdStartEmptySeconds = m
	case runEtcdLoaded:
		f.EtcdStartLoadedSeconds = m
	}
}

// median of vs (not empty); the mean of the middle two of an even count.
func median(vs []float64) float64 {
	s := slices.Sorted(slices.Values(vs))
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// timeStart starts a server with start, which returns once it is ready,
// and stops it: its start-up in seconds from its first process's start.
func timeStart(start func() (p *process, stop func() error, err error)) (float64, error) {
	p, stop, err := start()
	if err != nil {
		return 0, err
	}
	seconds := time.Since(p.started).Seconds()
	return seconds, stop()
}

// moreStrataStarts adds strata's other starts: empty ones beside dir, and
// restarts on dir, loaded.
func (r *runner) moreStrataStarts(ctx context.Context, bin, dir string, row *FootprintRow) error {
	for i := 1; i < r.cfg.FootprintStarts; i++ {
		empty := fmt.Sprintf("%s-empty-%d", dir, i)
		for _, s := range []struct{ setting, dir string }{{runEmpty, empty}, {runLoaded, dir}} {
			spec := r.env.strataSpec(s.dir, nil)
			seconds, err := timeStart(func() (*process, func() error, error) {
				p, _, err := startStrataServer(ctx, bin, spec, filepath.Join(r.env.tmp, "fp-strata-more.log"))
				if err != nil {
					return nil, nil, err
				}
				return p, p.stop, nil
			})
			if err != nil {
				return fmt.Errorf("bench: strata's start %d (%s): %w", i+1, s.setting, err)
			}
			row.addStart(s.setting, seconds)
		}
		if err := os.RemoveAll(empty); err != nil {
			return fmt.Errorf("bench: removing %s: %w", empty, err)
		}
	}
	return nil
}

// moreKubeStarts adds kube-apiserver's other starts, each with its etcd
// member (whose own start-up is the floor's): empty ones beside dir, and
// restarts on dir's loaded member.
func (r *runner) moreKubeStarts(ctx context.Context, bin, dir string, row *FootprintRow) error {
	for i := 1; i < r.cfg.FootprintStarts; i++ {
		empty := filepath.Join(dir, fmt.Sprintf("empty-%d", i))
		for _, s := range []struct{ setting, etcdSetting, etcdDir string }{
			{runEmpty, runEtcdEmpty, filepath.Join(empty, "etcd")},
			{runLoaded, runEtcdLoaded, filepath.Join(dir, "etcd")},
		} {
			var etcdReady float64
			seconds, err := timeStart(func() (*process, func() error, error) {
				ep, err := startEtcdChild(ctx, s.etcdDir, filepath.Join(r.env.tmp, "fp-kube-etcd-more.log"))
				if err != nil {
					return nil, nil, err
				}
				etcdReady = time.Since(ep.proc.started).Seconds()
				k, err := startKubeAPIServer(ctx, bin, filepath.Join(dir, fmt.Sprintf("kube-more-%d", i)), ep.endpoints,
					r.env.tokens())
				if err != nil {
					return nil, nil, errors.Join(err, ep.proc.stop())
				}
				k.proc.started = ep.proc.started // kube-apiserver's start-up includes its etcd's
				return k.proc, func() error { return errors.Join(k.proc.stop(), ep.proc.stop()) }, nil
			})
			if err != nil {
				return fmt.Errorf("bench: kube-apiserver's start %d (%s): %w", i+1, s.setting, err)
			}
			row.addStart(s.setting, seconds)
			row.addStart(s.etcdSetting, etcdReady)
		}
		if err := os.RemoveAll(empty); err != nil {
			return fmt.Errorf("bench: removing %s: %w", empty, err)
		}
	}
	return nil
}

// writeStartRuns lists every start-up behind the footprint's medians.
func (r *Report) writeStartRuns(b *strings.Builder) {
	for _, f := range r.Footprint {
		if len(f.StartRuns) == 0 {
			continue
		}
		var parts []string
		for _, setting := range strings.Split(startRunsOrder, ", ") {
			if runs := f.StartRuns[setting]; len(runs) > 0 {
				parts = append(parts, setting+" "+strings.Join(fmtSeconds(runs), " "))
			}
		}
		fmt.Fprintf(b, "\n%s: start-ups (s), in the order run: %s\n", f.Server, strings.Join(parts, "; "))
	}
}

func fmtSeconds(vs []float64) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = fmt.Sprintf("%.2f", v)
	}
	return out
}
