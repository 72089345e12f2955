package bench

import (
	"fmt"
	"testing"

	"github.com/stratadev/strata/bench/report"
)

// TestFootprintRatios computes the footprint ratios of one run's figures
// (run 21, bench/results/2026-11-27-consistent-read-floor.md) and checks
// each against the arithmetic written out.
func TestFootprintRatios(t *testing.T) {
	rep := &report.Report{Footprint: []report.FootprintRow{
		{Server: fpStrataEmbedded, StartEmptySeconds: 0.86, StartLoadedSeconds: 1.61, RSSEmptyMB: 231, RSSLoadedMB: 438, RSSRestartMB: 417},
		{Server: fpStrataApart, StartLoadedSeconds: 2.15, RSSEmptyMB: 230, RSSRestartMB: 346, EtcdRSSEmptyMB: 90, EtcdRSSRestartMB: 154},
		{Server: fpKube, StartEmptySeconds: 3.56, StartLoadedSeconds: 3.80, RSSEmptyMB: 268, RSSLoadedMB: 478, RSSRestartMB: 338,
			EtcdRSSEmptyMB: 91, EtcdRSSLoadedMB: 131, EtcdRSSRestartMB: 155,
			EtcdStartEmptySeconds: 0.21, EtcdStartLoadedSeconds: 0.66, EtcdReadAllSeconds: 0.50},
	}}
	want := []struct {
		name, target string
		value        float64
	}{
		{"start-up, empty (strata embedded ÷ kube+etcd)", "≤ 0.25", 0.86 / 3.56},
		{"start-up, loaded (strata embedded ÷ kube+etcd)", "≤ 0.25", 1.61 / 3.80},
		{"RSS after load, etcd included", "≤ 0.50", 438.0 / (478 + 131)},
		{"RSS after restart, etcd included", "≤ 0.50", 417.0 / (338 + 155)},
		{"RSS after restart, etcd excluded", "≤ 0.50", 346.0 / 338},
		{"RSS floor of strata, etcd excluded (strata with no objects ÷ kube-apiserver after restart)", "", 230.0 / 338},
		{"RSS floor of strata, etcd included (strata with no objects + its etcd member's growth on them ÷ kube+etcd after restart)",
			"", (231.0 + 155 - 91) / (338 + 155)},
		{"start-up floor, empty (etcd alone ÷ kube+etcd)", "", 0.21 / 3.56},
		{"start-up floor, loaded (etcd alone, then one read of every key, ÷ kube+etcd)", "", (0.66 + 0.50) / 3.80},
	}
	got := footprintRatios(rep)
	if len(got) != len(want) {
		t.Fatalf("%d ratios, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		g := got[i]
		if g.Name != w.name || g.Target != w.target || fmt.Sprintf("%.6f", g.Value) != fmt.Sprintf("%.6f", w.value) {
			t.Errorf("ratio %d: %q %q %.6f, want %q %q %.6f", i, g.Name, g.Target, g.Value, w.name, w.target, w.value)
		}
	}
}
