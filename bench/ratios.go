package bench

import (
	"fmt"
	"runtime"
	"slices"
	"time"

	"github.com/stratadev/strata/bench/internal/servers"
	"github.com/stratadev/strata/bench/report"
)

// ratioSpec says which cells a ratio compares and its target.
type ratioSpec struct {
	// side is the numerator's side: strata unless set; otherSide the
	// denominator's: etcd unless set.
	side, otherSide string
	strata, etcd    string
	// atLeast is the target throughput ratio (0: none) at the
	// concurrencies listed in at (nil: all).
	atLeast float64
	at      []int
}

var ratioSpecs = []ratioSpec{
	{strata: opCreate, etcd: opPut, atLeast: 0.70, at: []int{16}},
	{side: sideFloor, strata: opCreateFloor, etcd: opPut},
	{strata: opGet, etcd: opGet},
	{strata: opGetRV0, etcd: opGetSer},
	{strata: opList, etcd: opRange, atLeast: 1},
	{strata: opListRV0, etcd: opRangeSer, atLeast: 1},
	{strata: opPatch, etcd: opReadCAS, atLeast: 0.50, at: []int{16}},
	{strata: opUpdate, etcd: opReadCAS},
	{strata: opApply, etcd: opReadCAS, atLeast: 0.40, at: []int{16}},
	{strata: opApply2, etcd: opReadCAS},
	{otherSide: sideStrata, strata: opGetProtobuf, etcd: opGetJSON},
	{otherSide: sideStrata, strata: opListProtobuf, etcd: opListJSON, atLeast: 1.5},
	{otherSide: sideStrata, strata: opGetRBAC, etcd: opGetMasters, atLeast: 0.90, at: []int{16}},
	{otherSide: sideStrata, strata: opCreateRBAC, etcd: opCreateMasters, atLeast: 0.90, at: []int{16}},
	{otherSide: sideStrata, strata: opCreateAdmission, etcd: opCreateAdmissionOff, atLeast: 0.90, at: []int{16}},
	{otherSide: sideStrata, strata: opCreateVAP, etcd: opCreateVAPOff, atLeast: 0.75, at: []int{16}},
	// strata's create at least 0.90 of the floor's.
	{otherSide: sideFloor, strata: opCreate, etcd: opCreateFloor, atLeast: 0.90, at: []int{16}},
	// The create floor with managedFields recorded and the object
	// validated, against the do-nothing one: the most create ÷
	// create-floor a server that keeps them and validates can reach.
	{side: sideFloor, otherSide: sideFloor, strata: opCreateFMFloor, etcd: opCreateFloor},
	{otherSide: sideFloor, strata: opCreate, etcd: opCreateFMFloor},
	{side: sideFloor, strata: opGetFloor, etcd: opGet},
	{otherSide: sideFloor, strata: opGet, etcd: opGetFloor},
	// The consistent-read floor: the get floor with the shared revision
	// read a linearizable GET needs (bench/floor), and strata's GET ÷ it.
	{side: sideFloor, strata: opGetReadFloor, etcd: opGet},
	{otherSide: sideFloor, strata: opGet, etcd: opGetReadFloor},
	// The list floors (bench/floor; list-floor-read after the shared
	// revision read a consistent list needs), and strata's lists ÷ them.
	{side: sideFloor, strata: opListFloor, etcd: opRange},
	{otherSide: sideFloor, strata: opList, etcd: opListFloor},
	{side: sideFloor, strata: opListReadFloor, etcd: opRange},
	{otherSide: sideFloor, strata: opList, etcd: opListReadFloor},
	{otherSide: sideFloor, strata: opListProtobuf, etcd: opListProtobufFloor},
	{otherSide: sideFloor, strata: opListJSON, etcd: opListJSONFloor},
	// The highest patch, update and apply ÷ read+cas a server
	// reusing upstream's field manager (and validating) can reach, and
	// strata's share of it.
	{side: sideFloor, strata: opPatchFloor, etcd: opReadCAS},
	{side: sideFloor, strata: opUpdateFloor, etcd: opReadCAS},
	{side: sideFloor, strata: opApplyFloor, etcd: opReadCAS},
	{otherSide: sideFloor, strata: opPatch, etcd: opPatchFloor},
	{otherSide: sideFloor, strata: opUpdate, etcd: opUpdateFloor},
	{otherSide: sideFloor, strata: opApply, etcd: opApplyFloor},
}

// floorOps pair each floor operation with the server operation whose CPU
// per request it bounds from below.
var floorOps = [][2]string{{opCreateFloor, opCreate}, {opCreateFMFloor, opCreate}, {opGetFloor, opGet}, {opGetFloor, opGetRV0}, {opGetReadFloor, opGet}, {opListFloor, opList}, {opListReadFloor, opList},
	{opListProtobufFloor, opListProtobuf}, {opListJSONFloor, opListJSON},
	{opPatchFloor, opPatch}, {opUpdateFloor, opUpdate}, {opApplyFloor, opApply}}

// kubeSpecs are the strata ÷ kube-apiserver ratios of each operation, with
// their targets at 16 clients: throughput at least 3× kube's
// (throughput), server CPU per request at most 1/3 of kube's (cpu).
var kubeSpecs = []struct {
	op              string
	throughput, cpu bool
}{
	{opCreate, false, true}, {opGet, true, true}, {opGetRV0, true, true}, {opList, true, true},
	{opListRV0, true, true}, {opUpdate, false, true}, {opPatch, true, true}, {opApply, true, true},
	{opApply2, false, false}, {opGetProtobuf, false, false}, {opGetJSON, false, false},
	{opListProtobuf, true, true}, {opListJSON, true, true}, {opGetRBAC, false, false},
	{opGetMasters, false, false}, {opCreateRBAC, false, false}, {opCreateMasters, false, false},
}

func newReport(cfg Config) *report.Report {
	rep := &report.Report{GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH,
		GOMAXPROCS: runtime.GOMAXPROCS(0), NumCPU: runtime.NumCPU(), Command: cfg.Command,
		Concurrency: cfg.Concurrency, CellSeconds: cfg.Duration.Seconds(), CellMaxOps: cfg.MaxOps, Rounds: cfg.Rounds,
		Objects: cfg.Objects, Watchers: cfg.Watchers, DecodeLists: cfg.DecodeLists, Servers: cfg.Servers,
		StrataControllers: cfg.strataControllers()}
	if cfg.Footprint {
		rep.FootprintObjects, rep.FootprintBytes = cfg.FootprintObjects, cfg.FootprintBytes
	}
	if cfg.runs(sideKube) {
		rep.KubeVersion = servers.KubeVersion()
	}
	return rep
}

// finish records how long the run took and computes the ratios.
func finish(r *report.Report, elapsed time.Duration) {
	r.Seconds = elapsed.Seconds()
	for _, s := range ratioSpecs {
		for _, c := range r.Concurrency {
			side := s.side
			if side == "" {
				side = sideStrata
			}
			otherSide := s.otherSide
			if otherSide == "" {
				otherSide = sideEtcd
			}
			st, ok1 := r.Row(side, s.strata, c)
			et, ok2 := r.Row(otherSide, s.etcd, c)
			if !ok1 || !ok2 || et.PerSec == 0 {
				continue
			}
			q := report.Ratio{Name: s.strata + " ÷ " + s.etcd, Metric: "req/s", Concurrency: c,
				Strata: st.PerSec, Etcd: et.PerSec, Value: st.PerSec / et.PerSec}
			if s.atLeast > 0 && (s.at == nil || slices.Contains(s.at, c)) {
				met := q.Value >= s.atLeast
				q.Target, q.Met = fmt.Sprintf("≥ %.2f", s.atLeast), &met
			}
			r.Ratios = append(r.Ratios, q)
		}
	}
	finishKube(r)
	r.KubeRatios = append(r.KubeRatios, footprintRatios(r)...)
	st, ok1 := r.Row(sideStrata, opWatch, r.Watchers)
	et, ok2 := r.Row(sideEtcd, opWatch, r.Watchers)
	if ok1 && ok2 && et.P99Ms > 0 && et.P50Ms > 0 {
		met := st.P99Ms/et.P99Ms <= watchP99Target
		r.Ratios = append(r.Ratios,
			report.Ratio{Name: "watch p99", Metric: "ms", Concurrency: r.Watchers, Strata: st.P99Ms, Etcd: et.P99Ms,
				Value: st.P99Ms / et.P99Ms, Target: fmt.Sprintf("≤ %.2f", watchP99Target), Met: &met},
			report.Ratio{Name: "watch p50", Metric: "ms", Concurrency: r.Watchers, Strata: st.P50Ms, Etcd: et.P50Ms,
				Value: st.P50Ms / et.P50Ms})
	}
}

// finishKube computes the strata ÷ kube-apiserver ratios.
func finishKube(r *report.Report) {
	for _, s := range kubeSpecs {
		for _, c := range r.Concurrency {
			st, ok1 := r.Row(sideStrata, s.op, c)
			kt, ok2 := r.Row(sideKube, s.op, c)
			if !ok1 || !ok2 {
				continue
			}
			at16 := c == kubeTargetClients
			if kt.PerSec > 0 {
				r.KubeRatios = append(r.KubeRatios, kubeRatio(s.op, "req/s", c, st.PerSec, kt.PerSec, s.throughput && at16, true))
			}
			if st.ServerCPUUsPerOp != nil && kt.ServerCPUUsPerOp != nil && *kt.ServerCPUUsPerOp > 0 {
				r.KubeRatios = append(r.KubeRatios, kubeRatio(s.op, "CPU µs/req", c, *st.ServerCPUUsPerOp,
					*kt.ServerCPUUsPerOp, s.cpu && at16, false))
			}
		}
	}
	r.KubeRatios = append(r.KubeRatios, floorKubeRatios(r)...)
	st, ok1 := r.Row(sideStrata, opWatch, r.Watchers)
	kt, ok2 := r.Row(sideKube, opWatch, r.Watchers)
	if ok1 && ok2 && kt.P99Ms > 0 {
		r.KubeRatios = append(r.KubeRatios, kubeRatio(opWatch+" p99", "ms", r.Watchers, st.P99Ms, kt.P99Ms, true, false))
		if st.ServerCPUUsPerOp != nil && kt.ServerCPUUsPerOp != nil && *kt.ServerCPUUsPerOp > 0 {
			r.KubeRatios = append(r.KubeRatios, kubeRatio(opWatch, "CPU µs/delivery", r.Watchers, *st.ServerCPUUsPerOp,
				*kt.ServerCPUUsPerOp, false, false))
		}
	}
}

// floorKubeRatios are the floor's throughput and CPU per request ÷
// kube-apiserver's for the same operation, and its watch p99 ÷ kube's: the
// best ratios any server could reach, since every server does at least
// the floor's work.
func floorKubeRatios(r *report.Report) []report.Ratio {
	var qs []report.Ratio
	for _, fo := range floorOps {
		for _, c := range r.Concurrency {
			ft, ok1 := r.Row(sideFloor, fo[0], c)
			kt, ok2 := r.Row(sideKube, fo[1], c)
			if !ok1 || !ok2 {
				continue
			}
			name := fo[0] + " ÷ kube " + fo[1]
			if kt.PerSec > 0 {
				qs = append(qs, kubeRatio(name, "req/s", c, ft.PerSec, kt.PerSec, false, true))
			}
			if ft.ServerCPUUsPerOp != nil && kt.ServerCPUUsPerOp != nil && *kt.ServerCPUUsPerOp > 0 {
				qs = append(qs, kubeRatio(name, "CPU µs/req", c, *ft.ServerCPUUsPerOp, *kt.ServerCPUUsPerOp, false, false))
			}
		}
	}
	ft, ok1 := r.Row(sideFloor, opWatch, r.Watchers)
	kt, ok2 := r.Row(sideKube, opWatch, r.Watchers)
	if ok1 && ok2 && kt.P99Ms > 0 {
		qs = append(qs, kubeRatio("watch-floor p99 ÷ kube watch p99", "ms", r.Watchers, ft.P99Ms, kt.P99Ms, false, false))
	}
	return qs
}

// kubeRatio is strata's value ÷ kube-apiserver's, with its target
// when targeted: higher is better for throughput, lower otherwise.
func kubeRatio(op, metric string, c int, strata, kube float64, targeted, higherBetter bool) report.Ratio {
	q := report.Ratio{Name: op, Metric: metric, Concurrency: c, Strata: strata, Etcd: kube, Value: strata / kube}
	if !targeted {
		return q
	}
	var met bool
	switch {
	case higherBetter:
		met = q.Value >= kubeThroughputTarget
		q.Target = fmt.Sprintf("≥ %.2f", kubeThroughputTarget)
	case metric == "ms":
		met = q.Value <= kubeWatchP99Target
		q.Target = fmt.Sprintf("≤ %.2f", kubeWatchP99Target)
	default:
		met = q.Value <= kubeCPUTarget
		q.Target = fmt.Sprintf("≤ %.2f", kubeCPUTarget)
	}
	q.Met = &met
	return q
}

// The targets for strata ÷ kube-apiserver, at kubeTargetClients clients
// (docs/server.md explains where they come from).
const (
	kubeThroughputTarget = 3.0
	kubeCPUTarget        = 1.0 / 3
	kubeWatchP99Target   = 0.5
	kubeTargetClients    = 16
)

// watchP99Target is the bound on strata's watch p99 ÷ etcd's.
const watchP99Target = 1.5

// footprintRatios compares strata's footprint with kube-apiserver's.
func footprintRatios(r *report.Report) []report.Ratio {
	var s, sa, k *report.FootprintRow
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
	ratio := func(name, metric string, strata, kube, target float64) report.Ratio {
		met := strata/kube <= target
		return report.Ratio{Name: name, Metric: metric, Strata: strata, Etcd: kube, Value: strata / kube,
			Target: fmt.Sprintf("≤ %.2f", target), Met: &met}
	}
	qs := []report.Ratio{
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
		qs = append(qs, report.Ratio{Name: "RSS floor of strata, etcd excluded (strata with no objects ÷ kube-apiserver after restart)",
			Metric: "MB", Strata: sa.RSSEmptyMB, Etcd: k.RSSRestartMB, Value: sa.RSSEmptyMB / k.RSSRestartMB})
	}
	if s.RSSEmptyMB > 0 && k.EtcdRSSEmptyMB > 0 {
		// With etcd included: strata with no objects, plus what an etcd
		// member (the same code and settings as strata's embedded one)
		// grows by to hold the objects after a restart — its mapped
		// database and its index, which no server on etcd sheds.
		etcd := k.EtcdRSSRestartMB - k.EtcdRSSEmptyMB
		qs = append(qs, report.Ratio{Name: "RSS floor of strata, etcd included (strata with no objects + its etcd member's growth on them ÷ kube+etcd after restart)",
			Metric: "MB", Strata: s.RSSEmptyMB + etcd, Etcd: k.RSSRestartMB + k.EtcdRSSRestartMB,
			Value: (s.RSSEmptyMB + etcd) / (k.RSSRestartMB + k.EtcdRSSRestartMB)})
	}
	// The floor: no server on etcd is ready before its etcd member is.
	floor := func(name string, etcd, kube float64) report.Ratio {
		return report.Ratio{Name: name, Metric: "s", Strata: etcd, Etcd: kube, Value: etcd / kube}
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

// The footprint's targets, strata ÷ kube-apiserver.
const (
	startupTarget = 0.25
	rssTarget     = 0.5
)
