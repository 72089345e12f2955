package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/stratadev/strata/bench/internal/proc"
	"github.com/stratadev/strata/bench/internal/servers"
	"github.com/stratadev/strata/bench/report"
)

// Each start-up of the footprint is the median of Config.FootprintStarts
// starts: one start on two shared cores varies by a third or more from
// one start to the next (bench/README.md). The footprint's rounds
// (footprint.go) make the first sample of each setting, and the memory
// readings; the other starts follow them, each stopped once ready: an
// empty start on a new directory, removed after it, and a restart on the
// loaded one.

// defaultStarts is Config.FootprintStarts's default.
const defaultStarts = 3

// timeStart starts a server with start, which returns once it is ready,
// and stops it: its start-up in seconds from its first process's start.
func timeStart(start func() (p *proc.Process, stop func() error, err error)) (float64, error) {
	p, stop, err := start()
	if err != nil {
		return 0, err
	}
	seconds := time.Since(p.Started).Seconds()
	return seconds, stop()
}

// moreStrataStarts adds strata's other starts: empty ones beside dir, and
// restarts on dir, loaded.
func (r *runner) moreStrataStarts(ctx context.Context, bin, dir string, row *report.FootprintRow) error {
	for i := 1; i < r.cfg.FootprintStarts; i++ {
		empty := fmt.Sprintf("%s-empty-%d", dir, i)
		for _, s := range []struct{ setting, dir string }{{report.StartEmpty, empty}, {report.StartLoaded, dir}} {
			spec := r.env.strataSpec(s.dir, nil)
			seconds, err := timeStart(func() (*proc.Process, func() error, error) {
				p, _, err := servers.StartStrataServer(ctx, bin, spec, filepath.Join(r.env.tmp, "fp-strata-more.log"))
				if err != nil {
					return nil, nil, err
				}
				return p, p.Stop, nil
			})
			if err != nil {
				return fmt.Errorf("bench: strata's start %d (%s): %w", i+1, s.setting, err)
			}
			row.AddStart(s.setting, seconds)
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
func (r *runner) moreKubeStarts(ctx context.Context, bin, dir string, row *report.FootprintRow) error {
	for i := 1; i < r.cfg.FootprintStarts; i++ {
		empty := filepath.Join(dir, fmt.Sprintf("empty-%d", i))
		for _, s := range []struct{ setting, etcdSetting, etcdDir string }{
			{report.StartEmpty, report.StartEtcdEmpty, filepath.Join(empty, "etcd")},
			{report.StartLoaded, report.StartEtcdLoaded, filepath.Join(dir, "etcd")},
		} {
			var etcdReady float64
			seconds, err := timeStart(func() (*proc.Process, func() error, error) {
				ep, err := servers.StartEtcdChild(ctx, s.etcdDir, filepath.Join(r.env.tmp, "fp-kube-etcd-more.log"))
				if err != nil {
					return nil, nil, err
				}
				etcdReady = time.Since(ep.Proc.Started).Seconds()
				k, err := servers.StartKubeAPIServer(ctx, bin, filepath.Join(dir, fmt.Sprintf("kube-more-%d", i)), ep.Endpoints,
					r.env.tokens())
				if err != nil {
					return nil, nil, errors.Join(err, ep.Proc.Stop())
				}
				k.Proc.Started = ep.Proc.Started // kube-apiserver's start-up includes its etcd's
				return k.Proc, func() error { return errors.Join(k.Proc.Stop(), ep.Proc.Stop()) }, nil
			})
			if err != nil {
				return fmt.Errorf("bench: kube-apiserver's start %d (%s): %w", i+1, s.setting, err)
			}
			row.AddStart(s.setting, seconds)
			row.AddStart(s.etcdSetting, etcdReady)
		}
		if err := os.RemoveAll(empty); err != nil {
			return fmt.Errorf("bench: removing %s: %w", empty, err)
		}
	}
	return nil
}
