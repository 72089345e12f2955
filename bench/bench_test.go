package bench

import (
	"bytes"
	"context"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestRunTiny runs the whole generator at a tiny scale: every row must be
// there, with operations and without errors, and so must every ratio.
func TestRunTiny(t *testing.T) {
	var progress bytes.Buffer
	cfg := Config{
		Concurrency: []int{1, 4},
		Duration:    150 * time.Millisecond,
		MaxOps:      200,
		Rounds:      2,
		Objects:     20,
		Watchers:    10,
		WatchEvents: 5,
		Warmup:      2,
		DataBytes:   64,
		Timeout:     60 * time.Second,
		Progress:    &progress,
		Command:     "test",
	}
	rep, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatalf("Run: %v\nprogress:\n%s", err, progress.String())
	}
	var want []string
	for _, p := range (&runner{}).pairs() {
		for _, c := range cfg.Concurrency {
			for _, o := range p.ops() {
				want = append(want, key(o.side, o.name, c))
			}
		}
	}
	want = append(want, key(sideStrata, opWatch, cfg.Watchers), key(sideEtcd, opWatch, cfg.Watchers))
	var got []string
	for _, row := range rep.Rows {
		got = append(got, key(row.Side, row.Op, row.Concurrency))
		if row.Ops == 0 || row.Errors > 0 || row.PerSec <= 0 || row.P99Ms < row.P50Ms {
			t.Errorf("row %+v: want operations, no errors and p50 ≤ p99", row)
		}
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("rows:\n got %v\nwant %v", got, want)
	}
	if n := len(ratioSpecs)*len(cfg.Concurrency) + 2; len(rep.Ratios) != n {
		t.Errorf("%d ratios, want %d: %+v", len(rep.Ratios), n, rep.Ratios)
	}
	if rep.StoredBytes < cfg.DataBytes {
		t.Errorf("stored ConfigMap of %d bytes, want more than its %d-byte payload", rep.StoredBytes, cfg.DataBytes)
	}
	var table, js bytes.Buffer
	if err := rep.WriteTable(&table); err != nil {
		t.Fatal(err)
	}
	if err := rep.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"| strata | list-rv0 | 4 |", "| etcd | read+cas | 1 |", "watch p99 (ms)", "create ÷ put (req/s)", "| floor | create-floor | 4 |", "create-floor ÷ put (req/s)"} {
		if !strings.Contains(table.String(), s) {
			t.Errorf("table lacks %q:\n%s", s, table.String())
		}
	}
	t.Logf("%s", table.String())
}

func key(side, op string, c int) string { return side + "/" + op + "/" + strconv.Itoa(c) }
