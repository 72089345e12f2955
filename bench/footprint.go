package bench

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/stratadev/strata/bench/internal/cell"
	"github.com/stratadev/strata/bench/internal/proc"
	"github.com/stratadev/strata/bench/internal/servers"
	"github.com/stratadev/strata/bench/report"
)

// The footprint: start-up to ready (/readyz answering 200, from the
// first process's start) on an empty data directory and again on the same
// directory once it holds Config.FootprintObjects ConfigMaps, and resident
// memory (VmRSS, once settled: proc.SettledRSS) empty, after loading them and after
// the restart. Each server
// runs afresh in child processes of its own, apart from the cells':
//
//   - strata with its embedded etcd, one strata-server process as
//     `strata server` runs it (servers.StartStrataServer; etcd's memory included);
//   - strata with its etcd member in a child process of its own, so that
//     strata's memory is measured without etcd's: on an empty data
//     directory (what strata holds before any object), then on that data;
//   - kube-apiserver with its etcd member in a child process.

// Footprint server names.
const (
	fpStrataEmbedded = "strata (embedded etcd)"
	fpStrataApart    = "strata (etcd apart)"
	fpKube           = "kube-apiserver (etcd apart)"
)

// footprint measures the selected servers' footprint.
func (r *runner) footprint(ctx context.Context) error {
	dir := filepath.Join(r.env.tmp, "fp")
	if r.cfg.runs(sideStrata) {
		bin, err := servers.StrataServerBinary(ctx, r.cfg.StrataServer, r.cfg.Progress)
		if err != nil {
			return err
		}
		row, err := r.footprintStrata(ctx, bin, filepath.Join(dir, "s"))
		if err != nil {
			return err
		}
		if err := r.moreStrataStarts(ctx, bin, filepath.Join(dir, "s"), &row); err != nil {
			return err
		}
		r.recordFootprint(row)
		if row, err = r.footprintStrataApart(ctx, bin, filepath.Join(dir, "s")); err != nil {
			return err
		}
		r.recordFootprint(row)
	}
	if r.cfg.runs(sideKube) {
		row, err := r.footprintKube(ctx, filepath.Join(dir, "k"))
		if err != nil {
			return err
		}
		r.recordFootprint(row)
	}
	return nil
}

func (r *runner) recordFootprint(row report.FootprintRow) {
	r.rep.Footprint = append(r.rep.Footprint, row)
	fmt.Fprintf(r.cfg.Progress, "footprint %s: %+v\n", row.Server, row)
}

// footprintStrata starts strata with its embedded etcd on an empty data
// directory, loads it, and restarts it.
func (r *runner) footprintStrata(ctx context.Context, bin, dir string) (report.FootprintRow, error) {
	row := report.FootprintRow{Server: fpStrataEmbedded}
	spec := r.env.strataSpec(dir, nil)
	for round := range 2 {
		p, rc, err := servers.StartStrataServer(ctx, bin, spec, filepath.Join(r.env.tmp, fmt.Sprintf("fp-strata-%d.log", round)))
		if err != nil {
			return row, err
		}
		err = r.footprintRound(ctx, &row, round, p, nil, rc)
		if err = errors.Join(err, p.Stop()); err != nil {
			return row, err
		}
	}
	return row, nil
}

// footprintStrataApart starts strata with its etcd member in a process of
// its own on an empty data directory (its RSS there is what strata holds
// before any object), then restarts it so on the loaded data directory.
func (r *runner) footprintStrataApart(ctx context.Context, bin, dir string) (report.FootprintRow, error) {
	row := report.FootprintRow{Server: fpStrataApart}
	if err := r.strataApartEmpty(ctx, bin, dir+"-empty", &row); err != nil {
		return row, err
	}
	ep, err := servers.StartEtcdChild(ctx, filepath.Join(dir, "etcd"), filepath.Join(r.env.tmp, "fp-strata-etcd.log"))
	if err != nil {
		return row, err
	}
	spec := r.env.strataSpec(dir, ep.Endpoints)
	p, rc, err := servers.StartStrataServer(ctx, bin, spec, filepath.Join(r.env.tmp, "fp-strata-apart.log"))
	if err == nil {
		p.Started = ep.Proc.Started // start-up of both, as kube-apiserver's
		err = errors.Join(r.footprintRound(ctx, &row, 1, p, ep.Proc, rc), p.Stop())
	}
	return row, errors.Join(err, ep.Proc.Stop())
}

// strataApartEmpty records the settled RSS of strata and of its etcd
// member apart, both on empty data directories under dir.
func (r *runner) strataApartEmpty(ctx context.Context, bin, dir string, row *report.FootprintRow) error {
	ep, err := servers.StartEtcdChild(ctx, filepath.Join(dir, "etcd"), filepath.Join(r.env.tmp, "fp-strata-empty-etcd.log"))
	if err != nil {
		return err
	}
	spec := r.env.strataSpec(dir, ep.Endpoints)
	p, _, err := servers.StartStrataServer(ctx, bin, spec, filepath.Join(r.env.tmp, "fp-strata-empty.log"))
	if err == nil {
		err = errors.Join(readRSS(ctx, p, ep.Proc, &row.RSSEmptyMB, &row.EtcdRSSEmptyMB), p.Stop())
	}
	return errors.Join(err, ep.Proc.Stop())
}

// footprintKube starts kube-apiserver and its etcd member on an empty
// data directory, loads them, and restarts them.
func (r *runner) footprintKube(ctx context.Context, dir string) (report.FootprintRow, error) {
	row := report.FootprintRow{Server: fpKube}
	bin, err := servers.KubeAPIServer(ctx, r.cfg.KubeAPIServer, r.cfg.Progress)
	if err != nil {
		return row, err
	}
	for round := range 2 {
		ep, err := servers.StartEtcdChild(ctx, filepath.Join(dir, "etcd"), filepath.Join(r.env.tmp, fmt.Sprintf("fp-kube-etcd-%d.log", round)))
		if err != nil {
			return row, err
		}
		etcdReady := time.Since(ep.Proc.Started).Seconds()
		if round == 0 {
			row.AddStart(report.StartEtcdEmpty, etcdReady)
		} else {
			row.AddStart(report.StartEtcdLoaded, etcdReady)
		}
		k, err := servers.StartKubeAPIServer(ctx, bin, filepath.Join(dir, fmt.Sprintf("kube-%d", round)), ep.Endpoints,
			r.env.tokens())
		if err == nil {
			k.Proc.Started = ep.Proc.Started // kube-apiserver's start-up includes its etcd's
			err = errors.Join(r.footprintRound(ctx, &row, round, k.Proc, ep.Proc, k.Config), k.Proc.Stop())
		}
		if err == nil && round == 1 {
			// After kube-apiserver's start, so that it does not warm it.
			row.EtcdReadAllSeconds, err = readAllKeys(ctx, ep.Endpoints)
		}
		if err = errors.Join(err, ep.Proc.Stop()); err != nil {
			return row, err
		}
	}
	return row, r.moreKubeStarts(ctx, bin, dir, &row)
}

// readAllKeys times one (linearizable) read of every key of the etcd
// member at endpoints.
func readAllKeys(ctx context.Context, endpoints []string) (float64, error) {
	cli, err := servers.Client(endpoints)
	if err != nil {
		return 0, err
	}
	defer cli.Close()
	start := time.Now()
	resp, err := cli.Get(ctx, "/", clientv3.WithPrefix())
	took := time.Since(start).Seconds()
	if err != nil {
		return 0, fmt.Errorf("bench: reading every key of the loaded etcd member: %w", err)
	}
	if len(resp.Kvs) == 0 {
		return 0, errors.New("bench: the loaded etcd member holds no keys")
	}
	return took, nil
}

// footprintRound records a started server's start-up and, in round 0,
// its memory empty before loading it; then its memory (and its etcd's,
// when apart), each once settled.
func (r *runner) footprintRound(ctx context.Context, row *report.FootprintRow, round int, p, etcdProc *proc.Process, rc *rest.Config) error {
	ready := time.Since(p.Started).Seconds()
	rss, etcdRSS := &row.RSSRestartMB, &row.EtcdRSSRestartMB
	if round == 0 {
		row.AddStart(report.StartEmpty, ready)
		rss, etcdRSS = &row.RSSLoadedMB, &row.EtcdRSSLoadedMB
		if err := readRSS(ctx, p, etcdProc, &row.RSSEmptyMB, &row.EtcdRSSEmptyMB); err != nil {
			return err
		}
		t, err := newTarget(row.Server, rc, p.Pid())
		if err != nil {
			return err
		}
		start := time.Now()
		if err := r.loadFootprint(ctx, t); err != nil {
			return err
		}
		row.LoadSeconds = time.Since(start).Seconds()
	} else {
		row.AddStart(report.StartLoaded, ready)
	}
	return readRSS(ctx, p, etcdProc, rss, etcdRSS)
}

// readRSS stores the settled RSS of p and of etcdProc (if not nil).
func readRSS(ctx context.Context, p, etcdProc *proc.Process, rss, etcdRSS *float64) error {
	mb, err := proc.SettledRSS(ctx, p, etcdProc)
	if err != nil {
		return err
	}
	*rss, *etcdRSS = mb[0], mb[1]
	return nil
}

// loadFootprint creates Config.FootprintObjects ConfigMaps of
// Config.FootprintBytes in a namespace of their own.
func (r *runner) loadFootprint(ctx context.Context, t *target) error {
	return loadConfigMaps(ctx, t, r.cfg.FootprintObjects, r.cfg.FootprintBytes)
}

// loadConfigMaps creates n ConfigMaps of size bytes each in namespace
// "footprint" of t, 64 at a time: the loaded setting of a start-up.
func loadConfigMaps(ctx context.Context, t *target, n, size int) error {
	const ns = "footprint"
	if _, err := t.cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}},
		metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("bench: creating namespace %s on %s: %w", ns, t.side, err)
	}
	data := strings.Repeat("x", size)
	cms := t.cs.CoreV1().ConfigMaps(ns)
	err := cell.Parallel(ctx, n, 64, func(ctx context.Context, i int) error {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("fp-%05d", i)}, Data: map[string]string{"data": data}}
		_, err := cms.Create(ctx, cm, metav1.CreateOptions{})
		return err
	})
	if err != nil {
		return fmt.Errorf("bench: loading %d ConfigMaps into %s: %w", n, t.side, err)
	}
	return nil
}
