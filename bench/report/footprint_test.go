package report

import (
	"strings"
	"testing"
)

// TestAddStart: each start-up figure is the median of its setting's
// starts so far, whichever order they came in.
func TestAddStart(t *testing.T) {
	for _, tt := range []struct {
		runs []float64
		want float64
	}{
		{runs: []float64{0.9}, want: 0.9},
		{runs: []float64{0.9, 0.5}, want: 0.7},
		{runs: []float64{0.9, 0.5, 0.6}, want: 0.6},
		{runs: []float64{0.5, 4, 0.25, 0.75}, want: 0.625},
	} {
		var f FootprintRow
		for _, r := range tt.runs {
			f.AddStart(StartLoaded, r)
			f.AddStart(StartEtcdEmpty, 2*r)
		}
		if f.StartLoadedSeconds != tt.want || f.EtcdStartEmptySeconds != 2*tt.want || f.StartEmptySeconds != 0 {
			t.Errorf("starts %v: loaded %v, etcd empty %v, empty %v; want %v, %v, 0", tt.runs,
				f.StartLoadedSeconds, f.EtcdStartEmptySeconds, f.StartEmptySeconds, tt.want, 2*tt.want)
		}
	}
}

// TestWriteStartRuns: the footprint lists every start behind its medians,
// by server, in a fixed order of settings.
func TestWriteStartRuns(t *testing.T) {
	var s, k FootprintRow
	s.Server, k.Server = "strata (embedded etcd)", "kube-apiserver (etcd apart)"
	for _, v := range []float64{0.61, 0.924, 0.58} {
		s.AddStart(StartEmpty, v)
		k.AddStart(StartEtcdEmpty, v/4)
	}
	s.AddStart(StartLoaded, 1.9)
	k.AddStart(StartLoaded, 4.04)
	rep := &Report{Footprint: []FootprintRow{s, {Server: "strata (etcd apart)"}, k}}
	var b strings.Builder
	rep.writeStartRuns(&b)
	want := "\nstrata (embedded etcd): start-ups (s), in the order run: empty 0.61 0.92 0.58; loaded 1.90\n" +
		"\nkube-apiserver (etcd apart): start-ups (s), in the order run: loaded 4.04; etcd empty 0.15 0.23 0.14\n"
	if b.String() != want {
		t.Errorf("got\n%q\nwant\n%q", b.String(), want)
	}
}
