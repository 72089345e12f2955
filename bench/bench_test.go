package bench

import (
	"bytes"
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stratadev/strata/bench/internal/servers"
	"github.com/stratadev/strata/bench/report"
)

// TestMain lets the test binary run as the benchmark's strata and etcd
// child processes (bench/internal/servers).
func TestMain(m *testing.M) {
	servers.RunChild()
	os.Exit(m.Run())
}

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
	// The rows and ratios written out, not derived from the tables the
	// code runs, so that losing an operation or a ratio fails.
	checkRows(t, rep, cfg, false)
	// create, create-floor, get, get-rv0, list, list-rv0, patch, update,
	// apply, apply-2, get-protobuf, list-protobuf, get-rbac, create-rbac,
	// create-admission, create-vap, create ÷ floor, create-floor-fm ÷
	// create-floor, create ÷ create-floor-fm, get-floor,
	// get ÷ floor, get-floor-read, get ÷ get-floor-read, the list,
	// list-read, patch, update and apply floors and list (twice),
	// list-protobuf, list-json, patch, update and apply ÷ their floors at
	// each concurrency, then watch p99 and p50.
	if n := 35*len(cfg.Concurrency) + 2; len(rep.Ratios) != n {
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
	for _, s := range []string{"| strata | list-rv0 | 4 |", "| etcd | read+cas | 1 |", "watch p99 (ms)", "create ÷ put (req/s)", "| floor | create-floor | 4 |", "create-floor ÷ put (req/s)",
		"| floor | create-floor-fm | 4 |", "create-floor-fm ÷ create-floor (req/s)", "create ÷ create-floor-fm (req/s)",
		"| floor | get-floor | 4 |", "get-floor ÷ get (req/s)", "get ÷ get-floor (req/s)",
		"| floor | get-floor-read | 4 |", "get-floor-read ÷ get (req/s)", "get ÷ get-floor-read (req/s)",
		"| floor | apply-floor | 4 |", "apply-floor ÷ read+cas (req/s)", "apply ÷ apply-floor (req/s)",
		"| floor | list-floor | 4 |", "list-floor ÷ range (req/s)", "list ÷ list-floor (req/s)",
		"| floor | list-floor-read | 4 |", "list-floor-read ÷ range (req/s)", "list ÷ list-floor-read (req/s)",
		"| floor | patch-floor | 4 |", "patch-floor ÷ read+cas (req/s)", "patch ÷ patch-floor (req/s)",
		"| floor | update-floor | 4 |", "update-floor ÷ read+cas (req/s)", "update ÷ update-floor (req/s)",
		"| strata | list-json | 4 |", "list-protobuf ÷ list-json (req/s)",
		"| floor | list-protobuf-floor | 4 |", "| floor | list-json-floor | 4 |",
		"list-protobuf ÷ list-protobuf-floor (req/s)", "list-json ÷ list-json-floor (req/s)", "| strata | update | 4 |", "server CPU µs/req",
		"create-admission ÷ create-admission-off (req/s)", "create-vap ÷ create-vap-off (req/s)",
		"strata servers' --controllers: -serviceaccount-controller,-root-ca-certificate-publisher-controller,"} {
		if !strings.Contains(table.String(), s) {
			t.Errorf("table lacks %q:\n%s", s, table.String())
		}
	}
	t.Logf("%s", table.String())
}

// TestRunDecodedListsProfiled runs the lists alone with their bodies
// decoded (which checks the item count) and a cell hook, as
// -cpuprofile-side uses it, on strata in this process: the hook runs every
// measured list cell of each side.
func TestRunDecodedListsProfiled(t *testing.T) {
	cells := map[string]int{}
	cfg := Config{
		Concurrency: []int{1, 2}, Duration: 100 * time.Millisecond, MaxOps: 50, Rounds: 2, Objects: 20,
		Watchers: 1, WatchEvents: 1, Warmup: 1, DataBytes: 64, Timeout: 60 * time.Second,
		Only: []string{opList}, DecodeLists: true, InProcess: true,
		AroundCell: func(side string, cell func()) { cells[side]++; cell() },
	}
	rep, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, row := range rep.Rows {
		got = append(got, key(row.Side, row.Op, row.Concurrency))
		if row.Ops == 0 || row.Errors > 0 {
			t.Errorf("row %+v: want operations and no errors", row)
		}
	}
	if want := "strata/list/1 etcd/range/1 floor/list-floor/1 floor/list-floor-read/1 " +
		"strata/list/2 etcd/range/2 floor/list-floor/2 floor/list-floor-read/2"; strings.Join(got, " ") != want {
		t.Errorf("rows %v, want %s", got, want)
	}
	// 2 concurrencies × 2 rounds per operation (the floor has two).
	if cells["strata"] != 4 || cells["etcd"] != 4 || cells["floor"] != 8 || len(cells) != 3 {
		t.Errorf("cells run through the hook: %v, want 4 of strata and etcd and 8 of the floor", cells)
	}
}

// wantRows are the rows of a run with cfg's concurrencies and watchers,
// with kube-apiserver's beside strata's when kube is set; written out, not
// derived from the tables the code runs, so that losing an operation
// fails.
func wantRows(cfg Config, kube bool) []string {
	var want []string
	for _, pair := range [][]string{
		{"strata/get", "etcd/get", "floor/get-floor", "floor/get-floor-read"}, {"strata/get-rv0", "etcd/get-serializable"},
		{"strata/list", "etcd/range", "floor/list-floor", "floor/list-floor-read"}, {"strata/list-rv0", "etcd/range-serializable"},
		{"strata/get-protobuf", "strata/get-json"}, {"strata/list-protobuf", "strata/list-json", "floor/list-protobuf-floor", "floor/list-json-floor"},
		{"strata/get-rbac", "strata/get-masters"}, {"strata/create-rbac", "strata/create-masters"},
		{"strata/create", "etcd/put", "floor/create-floor", "floor/create-floor-fm"},
		{"strata/patch", "etcd/read+cas", "strata/update", "strata/apply", "strata/apply-2", "floor/patch-floor", "floor/update-floor", "floor/apply-floor"},
		{"strata/create-admission", "strata/create-admission-off"}, {"strata/create-vap", "strata/create-vap-off"},
	} {
		// kube-apiserver's after strata's and etcd's, before the floor;
		// the admission cells are strata against itself only.
		admission := strings.HasSuffix(pair[1], "-off")
		if kube && !admission {
			var twins, floor []string
			for _, op := range pair {
				if s, ok := strings.CutPrefix(op, "strata/"); ok {
					twins = append(twins, "kube/"+s)
				}
				if strings.HasPrefix(op, "floor/") {
					floor = append(floor, op)
				}
			}
			pair = append(append(pair[:len(pair)-len(floor)], twins...), floor...)
		}
		for _, c := range cfg.Concurrency {
			for _, op := range pair {
				want = append(want, op+"/"+strconv.Itoa(c))
			}
		}
	}
	w := strconv.Itoa(cfg.Watchers)
	want = append(want, "strata/watch/"+w)
	if kube {
		want = append(want, "kube/watch/"+w)
	}
	return append(want, "etcd/watch/"+w, "floor/watch/"+w)
}

// checkRows checks that rep has the rows wantRows lists, each with
// operations and no errors, and server CPU exactly on the servers' rows
// (the floor's included: it is a server of its own).
func checkRows(t *testing.T, rep *report.Report, cfg Config, kube bool) {
	t.Helper()
	var got []string
	for _, row := range rep.Rows {
		got = append(got, key(row.Side, row.Op, row.Concurrency))
		if row.Ops == 0 || row.Errors > 0 {
			t.Errorf("row %+v: want operations and no errors", row)
		}
		server := row.Side == sideStrata || row.Side == sideKube || row.Side == sideFloor
		if (row.ServerCPUUsPerOp != nil) != server || server && *row.ServerCPUUsPerOp < 0 {
			t.Errorf("row %s/%s/%d: server CPU per op %v, want a value on the servers' rows only",
				row.Side, row.Op, row.Concurrency, row.ServerCPUUsPerOp)
		}
	}
	if want := wantRows(cfg, kube); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("rows:\n got %v\nwant %v", got, want)
	}
}

func key(side, op string, c int) string { return side + "/" + op + "/" + strconv.Itoa(c) }
