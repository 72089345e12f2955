package report

import (
	"fmt"
	"slices"
	"strings"
)

// Start-up settings, the keys of FootprintRow.StartRuns.
const (
	StartEmpty      = "empty"
	StartLoaded     = "loaded"
	StartEtcdEmpty  = "etcd empty"
	StartEtcdLoaded = "etcd loaded"
	startRunsOrder  = "empty, loaded, etcd empty, etcd loaded"
)

// FootprintRow is one server's start-up and memory. A zero value was not
// measured in that setting.
type FootprintRow struct {
	Server string `json:"server"`
	// StartEmptySeconds and StartLoadedSeconds are start-up to ready on
	// an empty and on the loaded data directory.
	StartEmptySeconds  float64 `json:"start_empty_seconds,omitempty"`
	StartLoadedSeconds float64 `json:"start_loaded_seconds,omitempty"`
	// RSS of the server's process and, where it runs apart, its etcd's,
	// once settled (proc.SettledRSS): empty, after loading the objects,
	// and after the restart on them.
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
	// StartRuns are the start-ups measured, in seconds, by setting;
	// each start-up above is its setting's median.
	StartRuns map[string][]float64 `json:"start_runs,omitempty"`
}

// WriteFootprint writes the footprint table, if measured.
func (r *Report) WriteFootprint(b *strings.Builder) {
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

// AddStart records one start-up of setting and sets the row's figure for
// it to the median of those recorded.
func (f *FootprintRow) AddStart(setting string, seconds float64) {
	if f.StartRuns == nil {
		f.StartRuns = map[string][]float64{}
	}
	f.StartRuns[setting] = append(f.StartRuns[setting], seconds)
	m := Median(f.StartRuns[setting])
	switch setting {
	case StartEmpty:
		f.StartEmptySeconds = m
	case StartLoaded:
		f.StartLoadedSeconds = m
	case StartEtcdEmpty:
		f.EtcdStartEmptySeconds = m
	case StartEtcdLoaded:
		f.EtcdStartLoadedSeconds = m
	}
}

// Median of vs (not empty); the mean of the middle two of an even count.
func Median(vs []float64) float64 {
	s := slices.Sorted(slices.Values(vs))
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
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
