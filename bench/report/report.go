// Package report is a bench run's result: every cell's row, the ratios
// between cells, and the footprint, written as JSON or as Markdown tables.
package report

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
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
	// StrataControllers is the strata servers' --controllers.
	StrataControllers []string `json:"strata_controllers"`
	// Rows are the cells in the order they ran; Ratios compare strata
	// with raw etcd (or with itself), KubeRatios strata with
	// kube-apiserver (their Etcd field is kube-apiserver's value).
	Rows       []Row   `json:"rows"`
	Ratios     []Ratio `json:"ratios"`
	KubeRatios []Ratio `json:"kube_ratios,omitempty"`
	// Footprint is start-up and memory, when measured.
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
		return fmt.Errorf("report: encoding the report: %w", err)
	}
	return nil
}

// WriteTable writes the report as Markdown tables with a header naming
// the machine, the command and the settings.
func (r *Report) WriteTable(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s, GOMAXPROCS %d, %d CPUs\n", r.GoVersion, r.Platform, r.GOMAXPROCS, r.NumCPU)
	fmt.Fprintf(&b, "command: %s\n", r.Command)
	if len(r.Rows) > 0 {
		fmt.Fprintf(&b, "each cell: at most %gs or %d operations, in %d rounds alternating with its pair's other side; "+
			"list of %d ConfigMaps (%d bytes stored each); %d watchers; lists decoded: %v\n",
			r.CellSeconds, r.CellMaxOps, r.Rounds, r.Objects, r.StoredBytes, r.Watchers, r.DecodeLists)
	}
	fmt.Fprintf(&b, "strata servers' --controllers: %s\n", strings.Join(r.StrataControllers, ","))
	fmt.Fprintf(&b, "run took %.1fs\n", r.Seconds)
	if len(r.Rows) > 0 {
		r.writeCells(&b)
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
	r.WriteFootprint(&b)
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("report: writing the report: %w", err)
	}
	return nil
}

// writeCells writes the cells' table and their notes.
func (r *Report) writeCells(b *strings.Builder) {
	b.WriteString("\n| side | operation | clients | ops | req/s | p50 ms | p99 ms | server CPU µs/req | errors |\n" +
		"|---|---|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, row := range r.Rows {
		cpu := "–"
		if row.ServerCPUUsPerOp != nil {
			cpu = fmt.Sprintf("%.0f", *row.ServerCPUUsPerOp)
		}
		fmt.Fprintf(b, "| %s | %s | %d | %d | %.0f | %s | %s | %s | %d |\n", row.Side, row.Op, row.Concurrency,
			row.Ops, row.PerSec, FmtMs(row.P50Ms), FmtMs(row.P99Ms), cpu, row.Errors)
	}
	b.WriteString("\nserver CPU: the server process's user+system time over the cell (/proc/PID/stat, " +
		"10 ms ticks) ÷ ops; etcd is in the benchmark's process on both sides, so not counted\n")
	b.WriteString("\nwatch rows: clients = watchers, ops = deliveries, req/s = deliveries/s\n")
	for _, row := range r.Rows {
		if row.Note != "" {
			fmt.Fprintf(b, "- %s %s: %s\n", row.Side, row.Op, row.Note)
		}
		if row.FirstError != "" {
			fmt.Fprintf(b, "- %s %s (%d clients): %d errors, first: %s\n", row.Side, row.Op, row.Concurrency, row.Errors, row.FirstError)
		}
	}
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
		return FmtMs(v)
	case "s":
		return fmt.Sprintf("%.2f", v)
	}
	return fmt.Sprintf("%.0f", v)
}

// FmtMs prints milliseconds with about three significant digits.
func FmtMs(ms float64) string {
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

// ProgressLine is a row as one line of progress.
func (row Row) ProgressLine() string {
	s := fmt.Sprintf("%-6s %-18s clients %4d: %7d ops %9.0f/s  p50 %s ms  p99 %s ms", row.Side, row.Op,
		row.Concurrency, row.Ops, row.PerSec, FmtMs(row.P50Ms), FmtMs(row.P99Ms))
	if row.Errors > 0 {
		s += fmt.Sprintf("  %d errors (first: %s)", row.Errors, row.FirstError)
	}
	return s
}
