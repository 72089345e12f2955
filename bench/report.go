package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Report is the result of one run.
type Report struct {
	GoVersion  string `json:"go_version"`
	Platform   string `json:"platform"`
	GOMAXPROCS int    `json:"gomaxprocs"`
	NumCPU     int    `json:"num_cpu"`
	Command    string `json:"command"`
	// Settings of the run.
	Concurrency []int   `json:"concurrency"`
	CellSeconds float64 `json:"cell_seconds"`
	CellMaxOps  int     `json:"cell_max_ops"`
	Rounds      int     `json:"rounds"`
	Objects     int     `json:"objects"`
	Watchers    int     `json:"watchers"`
	DecodeLists bool    `json:"decode_lists"`
	// StoredBytes is the size of one stored ConfigMap: what raw puts write.
	StoredBytes int `json:"stored_bytes"`
	// Servers are the API servers the cells ran against; KubeVersion is
	// kube-apiserver's (k8s.io/kubernetes) version.
	Servers     []string `json:"servers"`
	KubeVersion string   `json:"kube_version,omitempty"`
	// StrataControllers is the strata servers' --controllers (controllers.go).
	StrataControllers []string `json:"strata_controllers"`
	// Rows are the cells in the order they ran; Ratios compare strata
	// with raw etcd (or with itself), KubeRatios strata with
	// kube-apiserver (their Etcd field is kube-apiserver's value).
	Rows       []Row   `json:"rows"`
	Ratios     []Ratio `json:"ratios"`
	KubeRatios []Ratio `json:"kube_ratios,omitempty"`
	// Footprint is start-up and memory (footprint.go), when measured.
	Footprint                        []FootprintRow `json:"footprint,omitempty"`
	FootprintObjects, FootprintBytes int
	// Seconds is how long the run took, cleanup excepted.
	Seconds float64 `json:"seconds"`
}

// Row is one cell: an operation of one side at one concurrency (for
// watch, the number of watchers; its Ops are deliveries).
type Row struct {
	Side        string  `json:"side"`
	Op          string  `json:"op"`
	Concurrency int     `json:"concurrency"`
	Ops         int     `json:"ops"`
	Errors      int     `json:"errors"`
	FirstError  string  `json:"first_error,omitempty"`
	Seconds     float64 `json:"seconds"`
	PerSec      float64 `json:"per_sec"`
	P50Ms       float64 `json:"p50_ms"`
	P99Ms       float64 `json:"p99_ms"`
	// ServerCPUSeconds is the server process's CPU time (user + system)
	// over the cell, ServerCPUUsPerOp that ÷ Ops in microseconds; nil for
	// raw etcd and for in-process servers (not measured).
	ServerCPUSeconds *float64 `json:"server_cpu_seconds,omitempty"`
	ServerCPUUsPerOp *float64 `json:"server_cpu_us_per_op,omitempty"`
	Note             string   `json:"note,omitempty"`
}

// Ratio compares a strata cell with the etcd cell it corresponds to:
// throughput (higher is better for strata) or, for watch, latency (lower
// is better).
type Ratio struct {
	Name        string  `json:"name"`
	Metric      string  `json:"metric"`
	Concurrency int     `json:"concurrency"`
	Strata      float64 `json:"strata"`
	Etcd        float64 `json:"etcd"`
	Value       float64 `json:"value"`
	Target      string  `json:"target,omitempty"`
	Met         *bool   `json:"met,omitempty"`
}

// ratioSpec says which cells a ratio compares and the target.
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
	// issue 18: strata's create at least 0.90 of the floor.
	{otherSide: sideFloor, strata: opCreate, etcd: opCreateFloor, atLeast: 0.90, at: []int{16}},
	// The create floor with managedFields recorded and the object
	// validated, against the do-nothing one: the most create ÷
	// create-floor a server that keeps them and validates can reach.
	{side: sideFloor, otherSide: sideFloor, strata: opCreateFMFloor, etcd: opCreateFloor},
	{otherSide: sideFloor, strata: opCreate, etcd: opCreateFMFloor},
	{side: sideFloor, strata: opGetFloor, etcd: opGet},
	{otherSide: sideFloor, strata: opGet, etcd: opGetFloor},
	// The consistent-read floor: the get floor with the shared revision
	// read a linearizable GET needs (readfloor.go), and strata's GET ÷ it.
	{side: sideFloor, strata: opGetReadFloor, etcd: opGet},
	{otherSide: sideFloor, strata: opGet, etcd: opGetReadFloor},
	// The list floors (listfloor.go; list-floor-read after the shared
	// revision read a consistent list needs), and strata's lists ÷ them.
	{side: sideFloor, strata: opListFloor, etcd: opRange},
	{otherSide: sideFloor, strata: opList, etcd: opListFloor},
	{side: sideFloor, strata: opListReadFloor, etcd: opRange},
	{otherSide: sideFloor, strata: opList, etcd: opListReadFloor},
	{otherSide: sideFloor, strata: opListProtobuf, etcd: opListProtobufFloor},
	{otherSide: sideFloor, strata: opListJSON, etcd: opListJSONFloor},
	// issue 13: the highest patch, update and apply ÷ read+cas a server
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
// issue 18's targets at 16 clients: throughput at least 3× kube's
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

// Issue 18's targets for strata ÷ kube-apiserver.
const (
	kubeThroughputTarget = 3.0
	kubeCPUTarget        = 1.0 / 3
	kubeWatchP99Target   = 0.5
	kubeTargetClients    = 16
)

// watchP99Target is the bound on strata's watch p99 ÷ etcd's.
const watchP99Target = 1.5

func newReport(cfg Config) *Report {
	rep := &Report{GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH,
		GOMAXPROCS: runtime.GOMAXPROCS(0), NumCPU: runtime.NumCPU(), Command: cfg.Command,
		Concurrency: cfg.Concurrency, CellSeconds: cfg.Duration.Seconds(), CellMaxOps: cfg.MaxOps, Rounds: cfg.Rounds,
		Objects: cfg.Objects, Watchers: cfg.Watchers, DecodeLists: cfg.DecodeLists, Servers: cfg.Servers,
		StrataControllers: cfg.strataControllers()}
	if cfg.Footprint {
		rep.FootprintObjects, rep.FootprintBytes = cfg.FootprintObjects, cfg.FootprintBytes
	}
	if cfg.runs(sideKube) {
		rep.KubeVersion = kubeVersion()
	}
	return rep
}

// finish computes the ratios.
func (r *Report) finish(elapsed time.Duration) {
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
			q := Ratio{Name: s.strata + " ÷ " + s.etcd, Metric: "req/s", Concurrency: c,
				Strata: st.PerSec, Etcd: et.PerSec, Value: st.PerSec / et.PerSec}
			if s.atLeast > 0 && (s.at == nil || slices.Contains(s.at, c)) {
				met := q.Value >= s.atLeast
				q.Target, q.Met = fmt.Sprintf("≥ %.2f", s.atLeast), &met
			}
			r.Ratios = append(r.Ratios, q)
		}
	}
	r.finishKube()
	r.KubeRatios = append(r.KubeRatios, r.footprintRatios()...)
	st, ok1 := r.Row(sideStrata, opWatch, r.Watchers)
	et, ok2 := r.Row(sideEtcd, opWatch, r.Watchers)
	if ok1 && ok2 && et.P99Ms > 0 && et.P50Ms > 0 {
		met := st.P99Ms/et.P99Ms <= watchP99Target
		r.Ratios = append(r.Ratios,
			Ratio{Name: "watch p99", Metric: "ms", Concurrency: r.Watchers, Strata: st.P99Ms, Etcd: et.P99Ms,
				Value: st.P99Ms / et.P99Ms, Target: fmt.Sprintf("≤ %.2f", watchP99Target), Met: &met},
			Ratio{Name: "watch p50", Metric: "ms", Concurrency: r.Watchers, Strata: st.P50Ms, Etcd: et.P50Ms,
				Value: st.P50Ms / et.P50Ms})
	}
}

// finishKube computes the strata ÷ kube-apiserver ratios.
func (r *Report) finishKube() {
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
	r.KubeRatios = append(r.KubeRatios, r.floorKubeRatios()...)
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
func (r *Report) floorKubeRatios() []Ratio {
	var qs []Ratio
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

// kubeRatio is strata's value ÷ kube-apiserver's, with issue 18's target
// when targeted: higher is better for throughput, lower otherwise.
func kubeRatio(op, metric string, c int, strata, kube float64, targeted, higherBetter bool) Ratio {
	q := Ratio{Name: op, Metric: metric, Concurrency: c, Strata: strata, Etcd: kube, Value: strata / kube}
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

// Row returns the cell of side's op at concurrency c.
func (r *Report) Row(side, op string, c int) (Row, bool) {
	for _, row := range r.Rows {
		if row.Side == side && row.Op == op && row.Concurrency == c {
			return row, true
		}
	}
	return Row{}, false
}

// Errors is the number of failed operations in all cells.
func (r *Report) Errors() int {
	n := 0
	for _, row := range r.Rows {
		n += row.Errors
	}
	return n
}

// WriteJSON writes the report as indented JSON.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(r); err != nil {
		return fmt.Errorf("bench: encoding the report: %w", err)
	}
	return nil
}

// WriteTable writes the report as Markdown tables with a header naming
// the machine, the command and the settings.
func (r *Report) WriteTable(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s, GOMAXPROCS %d, %d CPUs\n", r.GoVersion, r.Platform, r.GOMAXPROCS, r.NumCPU)
	fmt.Fprintf(&b, "command: %s\n", r.Command)
	fmt.Fprintf(&b, "each cell: at most %gs or %d operations, in %d rounds alternating with its pair's other side; "+
		"list of %d ConfigMaps (%d bytes stored each); %d watchers; lists decoded: %v\n",
		r.CellSeconds, r.CellMaxOps, r.Rounds, r.Objects, r.StoredBytes, r.Watchers, r.DecodeLists)
	fmt.Fprintf(&b, "strata servers' --controllers: %s\n", strings.Join(r.StrataControllers, ","))
	fmt.Fprintf(&b, "run took %.1fs\n\n", r.Seconds)
	b.WriteString("| side | operation | clients | ops | req/s | p50 ms | p99 ms | server CPU µs/req | errors |\n" +
		"|---|---|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, row := range r.Rows {
		cpu := "–"
		if row.ServerCPUUsPerOp != nil {
			cpu = fmt.Sprintf("%.0f", *row.ServerCPUUsPerOp)
		}
		fmt.Fprintf(&b, "| %s | %s | %d | %d | %.0f | %s | %s | %s | %d |\n", row.Side, row.Op, row.Concurrency,
			row.Ops, row.PerSec, fmtMs(row.P50Ms), fmtMs(row.P99Ms), cpu, row.Errors)
	}
	b.WriteString("\nserver CPU: the server process's user+system time over the cell (/proc/PID/stat, " +
		"10 ms ticks) ÷ ops; etcd is in the benchmark's process on both sides, so not counted\n")
	b.WriteString("\nwatch rows: clients = watchers, ops = deliveries, req/s = deliveries/s\n")
	for _, row := range r.Rows {
		if row.Note != "" {
			fmt.Fprintf(&b, "- %s %s: %s\n", row.Side, row.Op, row.Note)
		}
		if row.FirstError != "" {
			fmt.Fprintf(&b, "- %s %s (%d clients): %d errors, first: %s\n", row.Side, row.Op, row.Concurrency, row.Errors, row.FirstError)
		}
	}
	if len(r.Ratios) > 0 {
		writeRatios(&b, "strata ÷ etcd", "etcd", r.Ratios)
	}
	if len(r.KubeRatios) > 0 {
		writeRatios(&b, "strata ÷ kube", "kube", r.KubeRatios)
		b.WriteString("\nfloor ÷ kube rows: the floor's CPU per request (client-go over HTTP/2 and TLS, and for create " +
			"the etcd put, with create-floor-fm upstream's field manager, ConfigMap strategy and validation too, for get-floor-read and " +
			"list-floor-read a revision read shared as strata shares it (what a consistent GET or list must wait for), for update and " +
			"patch the etcd read+CAS, upstream's field manager, ConfigMap strategy and validation, for apply the read+CAS, the field manager and upstream's " +
			"Deployment defaults, strategy and validation, " +
			"for the lists the stored objects' list encoded once in the media type asked for, nothing else) " +
			"÷ kube-apiserver's (for watch, the floor's delivery p99: the etcd put and each watch's event, nothing else); " +
			"no server's CPU per request or p99 can be below the floor's, nor its throughput above\n")
	}
	r.writeFootprint(&b)
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("bench: writing the report: %w", err)
	}
	return nil
}

// writeRatios writes a table of ratios; other names the denominator.
func writeRatios(b *strings.Builder, title, other string, qs []Ratio) {
	fmt.Fprintf(b, "\n| %s | clients | strata | %s | ratio | target | met |\n|---|---:|---:|---:|---:|---|---|\n", title, other)
	for _, q := range qs {
		met := ""
		if q.Met != nil {
			met = map[bool]string{true: "yes", false: "no"}[*q.Met]
		}
		clients := "–"
		if q.Concurrency > 0 {
			clients = strconv.Itoa(q.Concurrency)
		}
		fmt.Fprintf(b, "| %s (%s) | %s | %s | %s | %.2f | %s | %s |\n", q.Name, q.Metric, clients,
			fmtValue(q.Metric, q.Strata), fmtValue(q.Metric, q.Etcd), q.Value, q.Target, met)
	}
}

func fmtValue(metric string, v float64) string {
	switch metric {
	case "ms":
		return fmtMs(v)
	case "s":
		return fmt.Sprintf("%.2f", v)
	}
	return fmt.Sprintf("%.0f", v)
}

// fmtMs prints milliseconds with about three significant digits.
func fmtMs(ms float64) string {
	switch {
	case ms < 1:
		return fmt.Sprintf("%.3f", ms)
	case ms < 10:
		return fmt.Sprintf("%.2f", ms)
	case ms < 100:
		return fmt.Sprintf("%.1f", ms)
	}
	return fmt.Sprintf("%.0f", ms)
}

// progressLine is a row as one line of progress.
func (row Row) progressLine() string {
	s := fmt.Sprintf("%-6s %-18s clients %4d: %7d ops %9.0f/s  p50 %s ms  p99 %s ms", row.Side, row.Op,
		row.Concurrency, row.Ops, row.PerSec, fmtMs(row.P50Ms), fmtMs(row.P99Ms))
	if row.Errors > 0 {
		s += fmt.Sprintf("  %d errors (first: %s)", row.Errors, row.FirstError)
	}
	return s
}
