package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"strconv"
	"strings"

	"github.com/stratadev/strata/bench"
	"github.com/stratadev/strata/bench/report"
)

// runLoad is "strata-bench load": it starts an etcd member and a strata
// server on it (a child process, on loopback), and with -servers
// strata,kube a kube-apiserver on an etcd member of its own beside it,
// measures every cell through client-go against each server next to the
// matching raw etcd operations and the floor server, with each server's
// CPU time per request, prints a table with their ratios, cleans up and
// exits. Without -kube-apiserver, kube-apiserver is built (go build,
// cached under the user's cache directory) from strata's module, which
// must then be the working directory.
func runLoad(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cfg, f, err := parseLoadFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		return 2
	}
	if f.cpuProfile != "" && f.profileSide != "" {
		cfg.AroundCell = profileCells(f.cpuProfile, f.profileSide, stderr)
	} else if f.cpuProfile != "" {
		stopProfile, err := startProfile(f.cpuProfile)
		if err != nil {
			fmt.Fprintln(stderr, "strata-bench:", err)
			return 1
		}
		defer stopProfile()
	}
	if !f.quiet {
		cfg.Progress = stderr
	}
	cfg.Command = strings.TrimSpace("strata-bench load " + strings.Join(args, " "))
	return runBench(ctx, cfg, f, stdout, stderr)
}

// runBench runs cfg and prints its report.
func runBench(ctx context.Context, cfg bench.Config, f flags, stdout, stderr io.Writer) int {
	rep, err := bench.Run(ctx, cfg)
	if err != nil {
		if rep != nil && len(rep.Rows) > 0 {
			fmt.Fprintln(stderr, "strata-bench: the run stopped early; the cells that ran:")
			writeReport(rep, f.json, stdout)
		}
		fmt.Fprintln(stderr, "strata-bench:", err)
		return 1
	}
	if err := writeReport(rep, f.json, stdout); err != nil {
		fmt.Fprintln(stderr, "strata-bench:", err)
		return 1
	}
	if n := rep.Errors(); n > 0 {
		fmt.Fprintf(stderr, "strata-bench: %d operations failed\n", n)
		return 1
	}
	return 0
}

func writeReport(rep *report.Report, json bool, stdout io.Writer) error {
	if json {
		return rep.WriteJSON(stdout)
	}
	return rep.WriteTable(stdout)
}

// flags are the command's own settings, besides bench.Config.
type flags struct {
	json, quiet bool
	cpuProfile  string
	// profileSide, when set, limits -cpuprofile to that side's cells.
	profileSide string
}

func parseLoadFlags(args []string, stderr io.Writer) (bench.Config, flags, error) {
	d := bench.Defaults
	var (
		cfg     bench.Config
		f       flags
		conc    string
		only    string
		servers string
	)
	fs := flag.NewFlagSet("strata-bench load", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&conc, "concurrency", joinInts(d.Concurrency), "comma-separated client counts each operation runs at")
	fs.DurationVar(&cfg.Duration, "duration", d.Duration, "longest a cell runs")
	fs.IntVar(&cfg.MaxOps, "ops", d.MaxOps, "most operations a cell starts")
	fs.IntVar(&cfg.Rounds, "rounds", d.Rounds, "alternating strata/etcd rounds each pair's cells are split into")
	fs.IntVar(&cfg.Objects, "objects", d.Objects, "ConfigMaps in the listed namespace (and keys in the raw range)")
	fs.IntVar(&cfg.Watchers, "watchers", d.Watchers, "watches that receive every event of the watch cells")
	fs.IntVar(&cfg.WatchEvents, "watch-events", d.WatchEvents, "most writes a watch cell makes (it also stops after -duration)")
	fs.IntVar(&cfg.Warmup, "warmup", d.Warmup, "unmeasured operations of each kind before its cells (negative: none)")
	fs.IntVar(&cfg.DataBytes, "data-bytes", d.DataBytes, "size of each ConfigMap's payload value")
	fs.BoolVar(&cfg.DecodeLists, "decode-lists", false, "decode strata's list responses into typed lists (default: read the bodies only)")
	fs.StringVar(&only, "only", "", "comma-separated strata operations to run, each with its etcd counterpart (get, list, list-rv0, create, patch, watch, get-protobuf, list-protobuf: beside JSON; get-rbac, create-rbac: a user under RBAC beside the admin; create-admission, create-vap: the default admission chain, and a ValidatingAdmissionPolicy, beside a server with admission off; default all)")
	serverFlags(fs, &cfg, &servers)
	fs.BoolVar(&cfg.InProcess, "in-process", false, "run strata in this process (no server CPU measured; what -cpuprofile-side strata needs)")
	fs.BoolVar(&cfg.Footprint, "footprint", false, "also measure each server's start-up to ready and RSS, empty and with -footprint-objects ConfigMaps (what strata-bench footprint measures alone)")
	footprintFlags(fs, &cfg, &f)
	fs.StringVar(&f.cpuProfile, "cpuprofile", "", "write a CPU profile of the whole process (etcd, server and clients) to this file")
	fs.StringVar(&f.profileSide, "cpuprofile-side", "", "with -cpuprofile: profile only this side's cells (strata, etcd or floor, not the watch cells), one file per round of each cell: FILE.1, FILE.2, ... (go tool pprof merges them)")
	if err := fs.Parse(args); err != nil {
		return cfg, f, err
	}
	if fs.NArg() > 0 {
		err := fmt.Errorf("unexpected arguments: %v", fs.Args())
		fmt.Fprintln(stderr, "strata-bench:", err)
		return cfg, f, err
	}
	if f.profileSide != "" && (f.cpuProfile == "" || f.profileSide != "strata" && f.profileSide != "etcd" && f.profileSide != "floor") {
		err := errors.New("-cpuprofile-side: needs -cpuprofile, and is strata, etcd or floor")
		fmt.Fprintln(stderr, "strata-bench:", err)
		return cfg, f, err
	}
	if f.profileSide == "strata" && !cfg.InProcess {
		err := errors.New("-cpuprofile-side strata: strata runs in a child process; add -in-process to profile it")
		fmt.Fprintln(stderr, "strata-bench:", err)
		return cfg, f, err
	}
	cfg.Servers = strings.Split(servers, ",")
	var err error
	if cfg.Concurrency, err = parseInts(conc); err != nil {
		fmt.Fprintln(stderr, "strata-bench: -concurrency:", err)
		return cfg, f, err
	}
	if only != "" {
		cfg.Only = strings.Split(only, ",")
	}
	return cfg, f, nil
}

// startProfile starts a CPU profile into file and returns what stops it.
func startProfile(file string) (func(), error) {
	out, err := os.Create(file)
	if err != nil {
		return nil, fmt.Errorf("-cpuprofile: %w", err)
	}
	if err := pprof.StartCPUProfile(out); err != nil {
		out.Close()
		return nil, fmt.Errorf("-cpuprofile: %w", err)
	}
	return func() { pprof.StopCPUProfile(); out.Close() }, nil
}

// profileCells returns a bench.Config.AroundCell that writes a CPU profile
// of each of side's cells to file.1, file.2, ...; a profile that cannot be
// written is reported on stderr and the cell runs unprofiled.
func profileCells(file, side string, stderr io.Writer) func(string, func()) {
	n := 0
	return func(s string, cell func()) {
		if s != side {
			cell()
			return
		}
		n++
		stop, err := startProfile(fmt.Sprintf("%s.%d", file, n))
		if err != nil {
			fmt.Fprintln(stderr, "strata-bench:", err)
			cell()
			return
		}
		defer stop()
		cell()
	}
}

func parseInts(s string) ([]int, error) {
	var out []int
	for f := range strings.SplitSeq(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			return nil, fmt.Errorf("%q: %w", f, err)
		}
		out = append(out, n)
	}
	return out, nil
}

func joinInts(ns []int) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ",")
}

// serverFlags are the flags that choose the servers and their binaries.
func serverFlags(fs *flag.FlagSet, cfg *bench.Config, servers *string) {
	fs.StringVar(servers, "servers", strings.Join(bench.Defaults.Servers, ","), "comma-separated API servers the run measures: strata, kube (kube-apiserver on an etcd of its own) or both")
	fs.StringVar(&cfg.StrataServer, "strata-server", "", "prebuilt strata-server binary the footprint runs (default: go build ./cmd/strata-server of strata's module)")
	fs.StringVar(&cfg.KubeAPIServer, "kube-apiserver", "", "prebuilt kube-apiserver binary (default: go build k8s.io/kubernetes/cmd/kube-apiserver of strata's module, cached)")
	fs.Func("strata-controllers", "comma-separated --controllers of every strata server the run starts (default: none of the kube-controller-manager controllers strata runs, as kube-apiserver runs without kube-controller-manager; '*': strata's default)",
		func(s string) error { cfg.StrataControllers = strings.Split(s, ","); return nil })
}

// footprintFlags are the footprint's settings and the report's format.
func footprintFlags(fs *flag.FlagSet, cfg *bench.Config, f *flags) {
	d := bench.Defaults
	fs.IntVar(&cfg.FootprintObjects, "footprint-objects", d.FootprintObjects, "ConfigMaps loaded for the footprint")
	fs.IntVar(&cfg.FootprintBytes, "footprint-bytes", d.FootprintBytes, "payload bytes of each footprint ConfigMap")
	fs.IntVar(&cfg.FootprintStarts, "footprint-starts", d.FootprintStarts, "starts of each server in each footprint setting (empty, loaded), whose median it reports")
	fs.DurationVar(&cfg.Timeout, "timeout", d.Timeout, "bound on the whole run")
	fs.BoolVar(&f.json, "json", false, "print the report as JSON")
	fs.BoolVar(&f.quiet, "q", false, "no progress lines on stderr")
}

// runFootprint is "strata-bench footprint": the footprint alone (start-up
// to ready, empty and loaded, and memory once settled) of strata and, with
// -servers strata,kube, kube-apiserver with its etcd member.
func runFootprint(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cfg := bench.Config{Footprint: true, NoCells: true}
	var (
		f       flags
		servers string
	)
	fs := flag.NewFlagSet("strata-bench footprint", flag.ContinueOnError)
	fs.SetOutput(stderr)
	serverFlags(fs, &cfg, &servers)
	footprintFlags(fs, &cfg, &f)
	if code, ok := parse(fs, args, stderr); !ok {
		return code
	}
	cfg.Servers = strings.Split(servers, ",")
	if !f.quiet {
		cfg.Progress = stderr
	}
	cfg.Command = strings.TrimSpace("strata-bench footprint " + strings.Join(args, " "))
	return runBench(ctx, cfg, f, stdout, stderr)
}

// parse parses a subcommand's flags, which take no arguments: ok is false
// when the command should exit with code (0 after -h, 2 on a usage error).
func parse(fs *flag.FlagSet, args []string, stderr io.Writer) (code int, ok bool) {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0, false
		}
		return 2, false
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "%s: unexpected arguments: %v\n", fs.Name(), fs.Args())
		return 2, false
	}
	return 0, true
}
