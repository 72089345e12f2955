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

	"github.com/stratadev/strata/storage/etcd"
)

// The footprint: start-up to ready (/readyz answering 200, from the
// first process's start) on an empty data directory and again on the same
// directory once it holds Config.FootprintObjects ConfigMaps, and resident
// memory (VmRSS, once settled: rss.go) empty, after loading them and after
// the restart. Each server
// runs afresh in child processes of its own, apart from the cells':
//
//   - strata with its embedded etcd, one strata-server process as
//     `strata server` runs it (strataserver.go; etcd's memory included);
//   - strata with its etcd member in a child process of its own, so that
//     strata's memory is measured without etcd's: on an empty data
//     directory (what strata holds before any object), then on that data;
//   - kube-apiserver with its etcd member in a child process.

// FootprintRow is one server's start-up and memory. A zero value was not
// measured in that setting.
type FootprintRow struct {
	Server string `json:"server"`
	// StartEmptySeconds and StartLoadedSeconds are start-up to ready on
	// an empty and on the loaded data directory.
	StartEmptySeconds  float64 `json:"start_empty_seconds,omitempty"`
	StartLoadedSeconds float64 `json:"start_loaded_seconds,omitempty"`
	// RSS of the server's process and, where it runs apart, its etcd's,
	// once settled (rss.go): empty, after loading the objects, and after
	// the restart on them.
	RSSEmptyMB       float64 `json:"rss_empty_mb,omitempty"`
	RSSLoadedMB      float64 `json:"rss_loaded_mb,omitempty"`
	RSSRestartMB     float64 `json:"rss_restart_mb,omitempty"`
	EtcdRSSEmptyMB   float64 `json:"etcd_rss_empty_mb,omitempty"`
	EtcdRSSLoadedMB  float64 `json:"etcd_rss_loaded_mb,omitempty"`
	EtcdRSSRestartMB float64 `json:"etcd_rss_restart_mb,omitempty"`
	LoadSeconds      float64 `json:"load_seconds,omitempty"`
	// EtcdStartEmptySeconds and EtcdStartLoadedSeconds are its etcd
	// member's own start-up to ready, where it runs apart (kube-apiserver's
	// row): the least start-up of any server that stores in etcd.
	EtcdStartEmptySeconds  float64 `json:"etcd_start_empty_seconds,omitempty"`
	EtcdStartLoadedSeconds float64 `json:"etcd_start_loaded_seconds,omitempty"`
	// EtcdReadAllSeconds is one read of every key of the loaded member:
	// what a server that holds its objects before it is ready (as
	// kube-apiserver's watch caches and strata's do) must read at least.
	EtcdReadAllSeconds float64 `json:"etcd_read_all_seconds,omitempty"`
	// StartRuns are the start-ups measured, in seconds, by setting
	// (startups.go); each start-up above is its setting's median.
	StartRuns map[string][]float64 `json:"start_runs,omitempty"`
}

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
		bin, err := strataServerBinary(ctx, r.cfg.StrataServer, r.cfg.Progress)
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

func (r *runner) recordFootprint(row FootprintRow) {
	r.rep.Footprint = append(r.rep.Footprint, row)
	fmt.Fprintf(r.cfg.Progress, "footprint %s: %+v\n", row.Server, row)
}

// footprintStrata starts strata with its embedded etcd on an empty data
// directory, loads it, and restarts it.
func (r *runner) footprintStrata(ctx context.Context, bin, dir string) (FootprintRow, error) {
	row := FootprintRow{Server: fpStrataEmbedded}
	spec := r.env.strataSpec(dir, nil)
	for round := range 2 {
		p, rc, err := startStrataServer(ctx, bin, spec, filepath.Join(r.env.tmp, fmt.Sprintf("fp-strata-%d.log", round)))
		if err != nil {
			return row, err
		}
		err = r.footprintRound(ctx, &row, round, p, nil, rc)
		if err = errors.Join(err, p.stop()); err != nil {
			return row, err
		}
	}
	return row, nil
}

// footprintStrataApart starts strata with its etcd member in a process of
// its own on an empty data directory (its RSS there is what strata holds
// before any object), then restarts it so on the loaded data directory.
func (r *runner) footprintStrataApart(ctx context.Context, bin, dir string) (FootprintRow, error) {
	row := FootprintRow{Server: fpStrataApart}
	if err := r.strataApartEmpty(ctx, bin, dir+"-empty", &row); err != nil {
		return row, err
	}
	ep, err := startEtcdChild(ctx, filepath.Join(dir, "etcd"), filepath.Join(r.env.tmp, "fp-strata-etcd.log"))
	if err != nil {
		return row, err
	}
	spec := r.env.strataSpec(dir, ep.endpoints)
	p, rc, err := startStrataServer(ctx, bin, spec, filepath.Join(r.env.tmp, "fp-strata-apart.log"))
	if err == nil {
		p.started = ep.proc.started // start-up of both, as kube-apiserver's
		err = errors.Join(r.footprintRound(ctx, &row, 1, p, ep.proc, rc), p.stop())
	}
	return row, errors.Join(err, ep.proc.stop())
}

// strataApartEmpty records the settled RSS of strata and of its etcd
// member apart, both on empty data directories under dir.
func (r *runner) strataApartEmpty(ctx context.Context, bin, dir string, row *FootprintRow) error {
	ep, err := startEtcdChild(ctx, filepath.Join(dir, "etcd"), filepath.Join(r.env.tmp, "fp-strata-empty-etcd.log"))
	if err != nil {
		return err
	}
	spec := r.env.strataSpec(dir, ep.endpoints)
	p, _, err := startStrataServer(ctx, bin, spec, filepath.Join(r.env.tmp, "fp-strata-empty.log"))
	if err == nil {
		err = errors.Join(readRSS(ctx, p, ep.proc, &row.RSSEmptyMB, &row.EtcdRSSEmptyMB), p.stop())
	}
	return errors.Join(err, ep.proc.stop())
}

// footprintKube starts kube-apiserver and its etcd member on an empty
// data directory, loads them, and restarts them.
func (r *runner) footprintKube(ctx context.Context, dir string) (FootprintRow, error) {
	row := FootprintRow{Server: fpKube}
	bin, err := kubeAPIServer(ctx, r.cfg.KubeAPIServer, r.cfg.Progress)
	if err != nil {
		return row, err
	}
	for round := range 2 {
		ep, err := startEtcdChild(ctx, filepath.Join(dir, "etcd"), filepath.Join(r.env.tmp, fmt.Sprintf("fp-kube-etcd-%d.log", round)))
		if err != nil {
			return row, err
		}
		etcdReady := time.Since(ep.proc.started).Seconds()
		if round == 0 {
			row.addStart(runEtcdEmpty, etcdReady)
		} else {
			row.addStart(runEtcdLoaded, etcdReady)
		}
		k, err := startKubeAPIServer(ctx, bin, filepath.Join(dir, fmt.Sprintf("kube-%d", round)), ep.endpoints,
			r.env.tokens())
		if err == nil {
			k.proc.started = ep.proc.started // kube-apiserver's start-up includes its etcd's
			err = errors.Join(r.footprintRound(ctx, &row, round, k.proc, ep.proc, k.config), k.proc.stop())
		}
		if err == nil && round == 1 {
			// After kube-apiserver's start, so that it does not warm it.
			row.EtcdReadAllSeconds, err = readAllKeys(ctx, ep.endpoints)
		}
		if err = errors.Join(err, ep.proc.stop()); err != nil {
			return row, err
		}
	}
	return row, r.moreKubeStarts(ctx, bin, dir, &row)
}

// readAllKeys times one (linearizable) read of every key of the etcd
// member at endpoints.
func readAllKeys(ctx context.Context, endpoints []string) (float64, error) {
	ecfg, err := etcd.Options{Servers: endpoints}.Complete()
	if err != nil {
		return 0, fmt.Errorf("bench: etcd options: %w", err)
	}
	cli, err := ecfg.Client()
	if err != nil {
		return 0, fmt.Errorf("bench: etcd client: %w", err)
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
func (r *runner) footprintRound(ctx context.Context, row *FootprintRow, round int, p, etcdProc *process, rc *rest.Config) error {
	ready := time.Since(p.started).Seconds()
	rss, etcdRSS := &row.RSSRestartMB, &row.EtcdRSSRestartMB
	if round == 0 {
		row.addStart(runEmpty, ready)
		rss, etcdRSS = &row.RSSLoadedMB, &row.EtcdRSSLoadedMB
		if err := readRSS(ctx, p, etcdProc, &row.RSSEmptyMB, &row.EtcdRSSEmptyMB); err != nil {
			return err
		}
		t, err := newTarget(row.Server, rc, p.cmd.Process.Pid)
		if err != nil {
			return err
		}
		start := time.Now()
		if err := r.loadFootprint(ctx, t); err != nil {
			return err
		}
		row.LoadSeconds = time.Since(start).Seconds()
	} else {
		row.addStart(runLoaded, ready)
	}
	return readRSS(ctx, p, etcdProc, rss, etcdRSS)
}

// readRSS stores the settled RSS of p and of etcdProc (if not nil).
func readRSS(ctx context.Context, p, etcdProc *process, rss, etcdRSS *float64) error {
	mb, err := settledRSS(ctx, p, etcdProc)
	if err != nil {
		return err
	}
	*rss, *etcdRSS = mb[0], mb[1]
	return nil
}

// loadFootprint creates Config.FootprintObjects ConfigMaps of
// Config.FootprintBytes in a namespace of their own.
func (r *runner) loadFootprint(ctx context.Context, t *target) error {
	const ns = "footprint"
	if _, err := t.cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}},
		metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("bench: creating namespace %s on %s: %w", ns, t.side, err)
	}
	data := strings.Repeat("x", r.cfg.FootprintBytes)
	cms := t.cs.CoreV1().ConfigMaps(ns)
	err := parallel(ctx, r.cfg.FootprintObjects, 64, func(ctx context.Context, i int) error {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("fp-%05d", i)}, Data: map[string]string{"data": data}}
		_, err := cms.Create(ctx, cm, metav1.CreateOptions{})
		return err
	})
	if err != nil {
		return fmt.Errorf("bench: loading %d ConfigMaps into %s: %w", r.cfg.FootprintObjects, t.side, err)
	}
	return nil
}

// etcdChild is an etcd member in a child process.
type etcdChild struct {
	proc      *process
	endpoints []string
}

func startEtcdChild(ctx context.Context, dir, logPath string) (*etcdChild, error) {
	p, ready, err := startChild(ctx, childSpec{Mode: childEtcd, DataDir: dir}, logPath)
	if err != nil {
		return nil, err
	}
	return &etcdChild{proc: p, endpoints: strings.Split(ready, ",")}, nil
}

// Issue 18's footprint targets, strata ÷ kube-apiserver.
const (
	startupTarget = 0.25
	rssTarget     = 0.5
)

// footprintRatios compares strata's footprint with kube-apiserver's.
func (r *Report) footprintRatios() []Ratio {
	var s, sa, k *FootprintRow
	for i := range r.Footprint {
		switch f := &r.Footprint[i]; f.Server {
		case fpStrataEmbedded:
			s = f
		case fpStrataApart:
			sa = f
		case fpKube:
			k = f
		}
	}
	if k == nil || s == nil {
		return nil
	}
	ratio := func(name, metric string, strata, kube, target float64) Ratio {
		met := strata/kube <= target
		return Ratio{Name: name, Metric: metric, Strata: strata, Etcd: kube, Value: strata / kube,
			Target: fmt.Sprintf("≤ %.2f", target), Met: &met}
	}
	qs := []Ratio{
		ratio("start-up, empty (strata embedded ÷ kube+etcd)", "s", s.StartEmptySeconds, k.StartEmptySeconds, startupTarget),
		ratio("start-up, loaded (strata embedded ÷ kube+etcd)", "s", s.StartLoadedSeconds, k.StartLoadedSeconds, startupTarget),
		ratio("RSS after load, etcd included", "MB", s.RSSLoadedMB, k.RSSLoadedMB+k.EtcdRSSLoadedMB, rssTarget),
		ratio("RSS after restart, etcd included", "MB", s.RSSRestartMB, k.RSSRestartMB+k.EtcdRSSRestartMB, rssTarget),
	}
	if sa != nil {
		qs = append(qs, ratio("RSS after restart, etcd excluded", "MB", sa.RSSRestartMB, k.RSSRestartMB, rssTarget))
	}
	if sa != nil && sa.RSSEmptyMB > 0 {
		// What strata holds before any object: the share of the ratio
		// above that no saving per object can remove.
		qs = append(qs, Ratio{Name: "RSS floor of strata, etcd excluded (strata with no objects ÷ kube-apiserver after restart)",
			Metric: "MB", Strata: sa.RSSEmptyMB, Etcd: k.RSSRestartMB, Value: sa.RSSEmptyMB / k.RSSRestartMB})
	}
	if s.RSSEmptyMB > 0 && k.EtcdRSSEmptyMB > 0 {
		// With etcd included: strata with no objects, plus what an etcd
		// member (the same code and settings as strata's embedded one)
		// grows by to hold the objects after a restart — its mapped
		// database and its index, which no server on etcd sheds.
		etcd := k.EtcdRSSRestartMB - k.EtcdRSSEmptyMB
		qs = append(qs, Ratio{Name: "RSS floor of strata, etcd included (strata with no objects + its etcd member's growth on them ÷ kube+etcd after restart)",
			Metric: "MB", Strata: s.RSSEmptyMB + etcd, Etcd: k.RSSRestartMB + k.EtcdRSSRestartMB,
			Value: (s.RSSEmptyMB + etcd) / (k.RSSRestartMB + k.EtcdRSSRestartMB)})
	}
	// The floor: no server on etcd is ready before its etcd member is.
	floor := func(name string, etcd, kube float64) Ratio {
		return Ratio{Name: name, Metric: "s", Strata: etcd, Etcd: kube, Value: etcd / kube}
	}
	// Loaded, a server that holds its objects when ready (as both do)
	// has also read them from etcd at least once.
	if k.EtcdStartEmptySeconds > 0 && k.EtcdStartLoadedSeconds > 0 {
		qs = append(qs, floor("start-up floor, empty (etcd alone ÷ kube+etcd)", k.EtcdStartEmptySeconds, k.StartEmptySeconds),
			floor("start-up floor, loaded (etcd alone, then one read of every key, ÷ kube+etcd)",
				k.EtcdStartLoadedSeconds+k.EtcdReadAllSeconds, k.StartLoadedSeconds))
	}
	return qs
}

// writeFootprint writes the footprint table, if measured.
func (r *Report) writeFootprint(b *strings.Builder) {
	if len(r.Footprint) == 0 {
		return
	}
	fmt.Fprintf(b, "\nfootprint: start-up to /readyz 200 (from the first process's start), empty and with the %d ConfigMaps "+
		"of %d bytes loaded, each the median of the starts listed below the table; VmRSS once settled (no growth over 1%% "+
		"in 3 s, sampled every 250 ms): empty, after loading them and after the restart on them\n\n",
		r.FootprintObjects, r.FootprintBytes)
	b.WriteString("| server | start-up empty s | start-up loaded s | load s | RSS empty MB | RSS loaded MB | RSS restart MB | " +
		"its etcd RSS empty MB | its etcd RSS loaded MB | its etcd RSS restart MB |\n" +
		"|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, f := range r.Footprint {
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", f.Server, fmtOpt(f.StartEmptySeconds, 2),
			fmtOpt(f.StartLoadedSeconds, 2), fmtOpt(f.LoadSeconds, 1), fmtOpt(f.RSSEmptyMB, 0), fmtOpt(f.RSSLoadedMB, 0),
			fmtOpt(f.RSSRestartMB, 0), fmtOpt(f.EtcdRSSEmptyMB, 0), fmtOpt(f.EtcdRSSLoadedMB, 0), fmtOpt(f.EtcdRSSRestartMB, 0))
	}
	for _, f := range r.Footprint {
		if f.EtcdStartEmptySeconds > 0 {
			fmt.Fprintf(b, "\n%s: its etcd member alone was ready in %s s empty and %s s loaded, and read every key "+
				"of the loaded member in %s s (the start-up floor rows)\n",
				f.Server, fmtOpt(f.EtcdStartEmptySeconds, 2), fmtOpt(f.EtcdStartLoadedSeconds, 2), fmtOpt(f.EtcdReadAllSeconds, 2))
		}
	}
	r.writeStartRuns(b)
}

// fmtOpt prints v with prec decimals, or "–" for 0 (not measured).
func fmtOpt(v float64, prec int) string {
	if v == 0 {
		return "–"
	}
	return fmt.Sprintf("%.*f", prec, v)
}
