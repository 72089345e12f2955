// Package bench is strata's load generator: a bounded run of cells against
// strata server, raw etcd, a floor server (bench/floor) and, when selected,
// kube-apiserver, and the footprint (start-up to ready and memory) of the
// servers.
//
// Run starts its own etcd member (fsync on) in this process, strata server
// on it as a child process (so that its CPU time can be read apart), and
// kube-apiserver on an etcd member of its own when Config.Servers names it,
// all on loopback, and drives them through client-go and clientv3 at
// several concurrencies. The cells (scenarios.go) pair each server
// operation with the raw etcd operation it corresponds to and with its
// floors. Every cell stops after Config.Duration or Config.MaxOps
// operations, whichever comes first, and the whole run after
// Config.Timeout. The report (bench/report) holds every cell's throughput,
// latency percentiles and server CPU time per request, and the ratios
// between cells (ratios.go); "strata-bench load" prints it.
//
// Startup and ServerLoad measure strata-server as users run it: its
// start-up to ready, and binaries side by side under the same load.
package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync/atomic"
	"time"

	"github.com/stratadev/strata/bench/internal/cell"
	"github.com/stratadev/strata/bench/report"
)

// Config bounds and shapes one run. The zero value of a field means its
// default (see Defaults).
type Config struct {
	// Concurrency lists the client counts each operation runs at.
	Concurrency []int
	// Duration and MaxOps bound each cell: it stops at whichever comes
	// first. The watch cells use Duration and WatchEvents.
	Duration time.Duration
	MaxOps   int
	// Rounds splits each pair's cells into this many alternating slices
	// (strata, etcd, strata, etcd, ...), each with a share of Duration and
	// MaxOps, so that the two sides of a ratio see the same load from
	// whatever else runs on the machine.
	Rounds int
	// Objects is how many ConfigMaps the listed namespace holds (and how
	// many keys the raw range reads).
	Objects int
	// Watchers is how many watches receive every event of the watch cells;
	// WatchEvents bounds the writes they receive.
	Watchers, WatchEvents int
	// Warmup operations of each kind run, unmeasured, before its cells
	// (negative: none).
	Warmup int
	// DataBytes is the size of each ConfigMap's payload value.
	DataBytes int
	// DecodeLists decodes strata's list responses into typed lists;
	// otherwise their bodies are read whole but not decoded (as the raw
	// ranges' values are not).
	DecodeLists bool
	// Only, when set, names the strata operations to run (get, list,
	// list-rv0, create, patch, watch), each with its etcd counterpart;
	// patch runs the server-side apply cells too; get-protobuf and
	// list-protobuf run beside strata's JSON get-json and list-json;
	// get-rbac and create-rbac (a user under RBAC) beside get-masters and
	// create-masters (the admin).
	Only []string
	// Timeout bounds the run (setup and cells); stopping the server and
	// etcd afterwards takes at most a minute more.
	Timeout time.Duration
	// Progress, when set, receives a line per cell as the run goes.
	Progress io.Writer
	// Command is recorded in the report (the command line that ran it).
	Command string
	// AroundCell, when set, runs every measured round of every cell of a
	// non-watch pair: it must call cell once. It is how a caller profiles
	// one side only (side is "strata", "etcd", "floor" or "kube").
	AroundCell func(side string, cell func())
	// Servers names the API servers the cells run against: "strata",
	// "kube" (kube-apiserver on its own etcd member) or both (the
	// default: strata only). Raw etcd's cells run in every case.
	Servers []string
	// InProcess runs strata in this process (as before kube-apiserver was
	// compared) instead of as a child process: its CPU time is then not
	// measured, but a CPU profile of this process (AroundCell) sees it.
	InProcess bool
	// KubeAPIServer is a prebuilt kube-apiserver binary; unset, it is
	// built from this module (servers.KubeAPIServer).
	KubeAPIServer string
	// StrataServer is a prebuilt strata-server binary for the footprint;
	// unset, it is built from strata's module (servers.StrataServerBinary).
	StrataServer string
	// StrataControllers is --controllers for every strata server the run
	// starts; nil runs none of the kube-controller-manager controllers
	// strata runs in its process, as kube-apiserver runs without
	// kube-controller-manager (controllers.go).
	StrataControllers []string
	// Footprint measures start-up to ready and memory of the selected
	// servers (footprint.go) after the cells, with FootprintObjects
	// ConfigMaps of FootprintBytes.
	Footprint                        bool
	FootprintObjects, FootprintBytes int
	// NoCells runs no cells: the footprint alone (it needs Footprint).
	NoCells bool
	// FootprintStarts is how many times each server is started in each
	// setting (empty, loaded); the footprint gives the median.
	FootprintStarts int
}

// Defaults are the settings of an unset Config field: the full run takes
// about two to four minutes on two cores.
var Defaults = Config{
	Concurrency: []int{1, 16, 64},
	Duration:    3 * time.Second,
	MaxOps:      20000,
	Rounds:      3,
	Objects:     1000,
	Watchers:    1000,
	WatchEvents: 200,
	Warmup:      20,
	DataBytes:   512,
	Timeout:     10 * time.Minute,
	Servers:     []string{sideStrata},

	FootprintObjects: 20000,
	FootprintBytes:   1024,
	FootprintStarts:  defaultStarts,
}

func (c Config) withDefaults() Config {
	d := Defaults
	if len(c.Concurrency) == 0 {
		c.Concurrency = d.Concurrency
	}
	setDefault(&c.Duration, d.Duration)
	setDefault(&c.MaxOps, d.MaxOps)
	setDefault(&c.Rounds, d.Rounds)
	setDefault(&c.Objects, d.Objects)
	setDefault(&c.Watchers, d.Watchers)
	setDefault(&c.WatchEvents, d.WatchEvents)
	setDefault(&c.Warmup, d.Warmup)
	setDefault(&c.DataBytes, d.DataBytes)
	setDefault(&c.Timeout, d.Timeout)
	setDefault(&c.FootprintObjects, d.FootprintObjects)
	setDefault(&c.FootprintBytes, d.FootprintBytes)
	setDefault(&c.FootprintStarts, d.FootprintStarts)
	if len(c.Servers) == 0 {
		c.Servers = d.Servers
	}
	if c.Progress == nil {
		c.Progress = io.Discard
	}
	return c
}

func setDefault[T int | time.Duration](v *T, d T) {
	if *v == 0 {
		*v = d
	}
}

func (c Config) validate() error {
	var errs []error
	for i, n := range c.Concurrency {
		if n < 1 {
			errs = append(errs, fmt.Errorf("concurrency %d: must be at least 1", n))
		}
		if slices.Contains(c.Concurrency[:i], n) {
			errs = append(errs, fmt.Errorf("concurrency %d: listed twice", n))
		}
	}
	for _, f := range []struct {
		name string
		v    int64
	}{{"duration", int64(c.Duration)}, {"ops", int64(c.MaxOps)}, {"rounds", int64(c.Rounds)},
		{"objects", int64(c.Objects)}, {"watchers", int64(c.Watchers)}, {"watch events", int64(c.WatchEvents)},
		{"data bytes", int64(c.DataBytes)}, {"timeout", int64(c.Timeout)}} {
		if f.v < 0 {
			errs = append(errs, fmt.Errorf("%s: must not be negative", f.name))
		}
	}
	for _, name := range c.Only {
		if !slices.Contains([]string{opGet, opGetRV0, opList, opListRV0, opCreate, opPatch, opWatch, opGetProtobuf, opListProtobuf,
			opGetRBAC, opCreateRBAC, opCreateAdmission, opCreateVAP}, name) {
			errs = append(errs, fmt.Errorf("only: %q is not one of get, get-rv0, list, list-rv0, create, patch, watch, get-protobuf, list-protobuf, get-rbac, create-rbac, create-admission, create-vap", name))
		}
	}
	for i, s := range c.Servers {
		if s != sideStrata && s != sideKube || slices.Contains(c.Servers[:i], s) {
			errs = append(errs, fmt.Errorf("servers: %q is not strata or kube, or is listed twice", s))
		}
	}
	if c.NoCells && !c.Footprint {
		errs = append(errs, errors.New("no cells: needs the footprint, or there is nothing to run"))
	}
	if c.Footprint && c.InProcess {
		errs = append(errs, errors.New("footprint: measures servers in child processes, not with in-process strata"))
	}
	if err := c.checkControllers(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// Run runs the whole benchmark and returns its report. It returns an error
// when the environment cannot be set up, a preparation step fails or the
// timeout passes, with the report of the cells that ran when there are
// any; failed operations inside cells are counted in the report instead.
func Run(ctx context.Context, cfg Config) (rep *report.Report, err error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, fmt.Errorf("bench: config: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	start := time.Now()
	e, err := startEnv(ctx, cfg)
	if err != nil {
		return nil, withTimeout(ctx, cfg, err)
	}
	defer func() {
		if cerr := e.close(); cerr != nil && err == nil {
			err = cerr
		}
	}()
	r := &runner{cfg: cfg, env: e, rep: newReport(cfg), floorT: &target{side: sideFloor}}
	if err := r.run(ctx); err != nil {
		// The cells that ran (the footprint runs last) are reported still.
		finish(r.rep, time.Since(start))
		return r.rep, withTimeout(ctx, cfg, err)
	}
	finish(r.rep, time.Since(start))
	return r.rep, nil
}

// runs says whether the run drives the server side.
func (c Config) runs(side string) bool { return slices.Contains(c.Servers, side) }

// withTimeout says so when the run's timeout caused err.
func withTimeout(ctx context.Context, cfg Config, err error) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("bench: the run's timeout (%s) passed: %w", cfg.Timeout, err)
	}
	return err
}

// runner carries one run's state.
type runner struct {
	cfg Config
	env *env
	rep *report.Report
	// value is the bytes strata stores for one ConfigMap of the listed
	// namespace: what the raw etcd operations write.
	value string
	// payload is every ConfigMap's payload value.
	payload string
	// rawItems is how many keys the raw range reads: the copies of what
	// a list of strata's namespace holds.
	rawItems int
	// counter numbers the patches, so that each changes its object.
	counter atomic.Int64
	// floorT is the floor server's clients, filled in when it starts
	// (prepareFloor), so that its cells run the same operations as the
	// servers'.
	floorT *target
}

// run prepares the data, then runs each operation pair at every
// concurrency (strata's cell and etcd's in alternating rounds, so that each
// pair is measured close together in time), then the watch cells.
func (r *runner) run(ctx context.Context) error {
	if r.cfg.NoCells {
		return r.footprint(ctx)
	}
	if err := r.setup(ctx); err != nil {
		return err
	}
	for _, p := range r.pairs() {
		if !r.selected(p.strata.name) {
			continue
		}
		if err := r.runPair(ctx, p); err != nil {
			return err
		}
	}
	if r.selected(opWatch) {
		if err := r.runWatches(ctx); err != nil {
			return err
		}
	}
	if r.cfg.Footprint {
		if err := r.env.stopServers(); err != nil {
			return err
		}
		return r.footprint(ctx)
	}
	return nil
}

// runWatches runs the watch cell of each server, of raw etcd and of the
// floor.
func (r *runner) runWatches(ctx context.Context) error {
	for _, t := range r.env.targets() {
		row, err := r.serverWatch(ctx, t)
		if err != nil {
			return err
		}
		r.record(row)
	}
	row, err := r.rawWatch(ctx)
	if err != nil {
		return err
	}
	r.record(row)
	if row, err = r.floorWatch(ctx); err != nil {
		return err
	}
	r.record(row)
	return nil
}

// selected says whether Config.Only lets the strata operation name run.
func (r *runner) selected(name string) bool {
	return len(r.cfg.Only) == 0 || slices.Contains(r.cfg.Only, name)
}

// runPair runs one strata operation and its etcd counterpart.
func (r *runner) runPair(ctx context.Context, p pair) error {
	for _, o := range p.ops() {
		if o.prepare != nil {
			if err := o.prepare(ctx); err != nil {
				return fmt.Errorf("bench: preparing %s %s: %w", o.side, o.name, err)
			}
		}
		if err := r.warmup(ctx, o); err != nil {
			return fmt.Errorf("bench: warming up %s %s: %w", o.side, o.name, err)
		}
	}
	rounds := r.cfg.Rounds
	d, maxOps := r.cfg.Duration/time.Duration(rounds), (r.cfg.MaxOps+rounds-1)/rounds
	for _, c := range r.cfg.Concurrency {
		res := make([]cell.Result, len(p.ops()))
		for round := range rounds {
			for i, o := range p.ops() {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				var err error
				r.aroundCell(o.side, func() {
					var got cell.Result
					got, err = cell.Measured(o.serverPID(), func() cell.Result { return cell.Run(ctx, c, d, round*maxOps, maxOps, o.run) })
					res[i].Add(got)
				})
				if err != nil {
					return fmt.Errorf("bench: %s %s: %w", o.side, o.name, err)
				}
			}
		}
		for i, o := range p.ops() {
			r.record(res[i].Row(o.side, o.name, c))
		}
	}
	return nil
}

// aroundCell runs cell through Config.AroundCell when one is set.
func (r *runner) aroundCell(side string, cell func()) {
	if r.cfg.AroundCell == nil {
		cell()
		return
	}
	r.cfg.AroundCell(side, cell)
}

// warmup runs an operation Config.Warmup times, one at a time, unmeasured.
func (r *runner) warmup(ctx context.Context, o op) error {
	for i := range r.cfg.Warmup {
		if err := o.run(ctx, cell.Call{I: i}); err != nil {
			return err
		}
	}
	return nil
}

func (r *runner) record(row report.Row) {
	r.rep.Rows = append(r.rep.Rows, row)
	fmt.Fprintln(r.cfg.Progress, row.ProgressLine())
}
