package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/stratadev/strata/bench/internal/proc"
	"github.com/stratadev/strata/bench/report"
)

// smpPackage is the minimal Go program that applies a strategic merge
// patch with apimachinery, the other side of the env-list comparison;
// timeprocPackage the small program that times each process.
const (
	smpPackage      = "github.com/stratadev/strata/bench/internal/smp-apimachinery"
	timeprocPackage = "github.com/stratadev/strata/bench/internal/timeproc"
)

// offlineCommands are the offline commands timed on the README's small
// inputs, by name, with out standing for the output directory (removed
// before each run).
var offlineCommands = []struct{ name, args string }{
	{"patch", "patch -f examples/deployment.yaml --patch-file examples/env-patch.yaml"},
	{"diff", "diff cmd/strata/testdata/diff/last.yaml cmd/strata/testdata/diff/new.yaml --current cmd/strata/testdata/diff/live.yaml"},
	{"merge3", "merge3 --original merge3/testdata/scenarios/update/original --upstream merge3/testdata/scenarios/update/upstream --local merge3/testdata/scenarios/update/local --output OUT"},
	{"pkg", "pkg --help"},
	{"version", "version"},
}

// runCommands is "strata-bench commands STRATA...": the start-up of the
// offline commands, whole process, for each strata binary given (an old
// build and a new one, say): wall time (mean ± σ and minimum), CPU time
// (user + system) and peak RSS (the median), each process timed by this
// one; then the 10,000-entry env list with $setElementOrder against the
// minimal Go program calling apimachinery's StrategicMergePatch.
func runCommands(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("strata-bench commands", flag.ContinueOnError)
	fs.SetOutput(stderr)
	runs := fs.Int("runs", 30, "measured runs of each small command (after -warmup)")
	warmup := fs.Int("warmup", 3, "unmeasured runs of each small command first")
	entries := fs.Int("env-entries", 10000, "entries of the env list (0: skip the env list)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() == 0 {
		fmt.Fprintln(stderr, "usage: strata-bench commands [flags] STRATA [STRATA ...]")
		return 2
	}
	if err := timeCommands(ctx, fs.Args(), *runs, *warmup, *entries, stdout, stderr); err != nil {
		fmt.Fprintln(stderr, "strata-bench commands:", err)
		return 1
	}
	return 0
}

func timeCommands(ctx context.Context, bins []string, runs, warmup, entries int, stdout, stderr io.Writer) error {
	root, err := proc.ModuleRoot(ctx)
	if err != nil {
		return err
	}
	work, err := os.MkdirTemp("", "strata-commands-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	timer, err := proc.GoBinary(ctx, "", timeprocPackage, "timeproc", "(none)", stderr)
	if err != nil {
		return err
	}
	out := filepath.Join(work, "out")
	fmt.Fprintln(stdout, "| binary | command | wall mean ± σ | wall min | CPU (user+sys, mean) | peak RSS (median) |")
	fmt.Fprintln(stdout, "|---|---|---|---|---|---|")
	for _, bin := range bins {
		for _, c := range offlineCommands {
			argv := strings.Fields(strings.ReplaceAll(c.args, "OUT", out))
			t, err := timeProcess(ctx, timer, root, out, append([]string{bin}, argv...), warmup, runs)
			if err != nil {
				return fmt.Errorf("%s %s: %w", bin, c.name, err)
			}
			fmt.Fprintf(stdout, "| %s | %s | %s |\n", bin, c.name, t)
		}
	}
	if entries == 0 {
		return nil
	}
	return timeEnvList(ctx, timer, root, work, bins, entries, stdout, stderr)
}

// timeEnvList times strata patch (5 runs after 1 warm-up) and
// apimachinery's minimal program (3 runs) on the env list.
func timeEnvList(ctx context.Context, timer, root, work string, bins []string, entries int, stdout, stderr io.Writer) error {
	if err := writeEnvList(work, entries); err != nil {
		return err
	}
	smp, err := proc.GoBinary(ctx, "", smpPackage, "smp-apimachinery", "(none)", stderr)
	if err != nil {
		return err
	}
	pod, patch := filepath.Join(work, "pod.json"), filepath.Join(work, "patch.json")
	fmt.Fprintf(stdout, "\n%d-entry env list with $setElementOrder (whole process):\n\n", entries)
	fmt.Fprintln(stdout, "| program | wall mean ± σ | wall min | CPU (user+sys, mean) | peak RSS (median) |")
	fmt.Fprintln(stdout, "|---|---|---|---|---|")
	for _, bin := range bins {
		t, err := timeProcess(ctx, timer, root, "", []string{bin, "patch", "-f", pod, "--patch-file", patch, "-o", "json"}, 1, 5)
		if err != nil {
			return fmt.Errorf("%s patch: %w", bin, err)
		}
		fmt.Fprintf(stdout, "| %s patch -o json | %s |\n", bin, t)
	}
	t, err := timeProcess(ctx, timer, root, "", []string{smp, pod, patch}, 0, 3)
	if err != nil {
		return fmt.Errorf("smp-apimachinery: %w", err)
	}
	fmt.Fprintf(stdout, "| apimachinery, minimal program | %s |\n", t)
	return nil
}

// timings are one command's measured runs.
type timings struct{ wall, cpu, rss []float64 }

// String is the table cells: wall mean ± σ, wall min, CPU mean (ms) and
// the median peak RSS (MB).
func (t timings) String() string {
	mean, sd := meanSD(t.wall)
	cpu, _ := meanSD(t.cpu)
	return fmt.Sprintf("%.1f ± %.1f ms | %.1f ms | %.1f ms | %.1f MB", mean, sd, slices.Min(t.wall), cpu, report.Median(t.rss))
}

// timeProcess runs argv in dir through timer warmup times, then runs
// times measured, removing clean (if set) before each run; a run that
// fails is an error.
func timeProcess(ctx context.Context, timer, dir, clean string, argv []string, warmup, runs int) (timings, error) {
	var t timings
	for i := range warmup + runs {
		if clean != "" {
			os.RemoveAll(clean)
		}
		cmd := exec.CommandContext(ctx, timer, argv...)
		cmd.Dir = dir
		var stderr strings.Builder
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			return t, fmt.Errorf("%w: %s", err, stderr.String())
		}
		if i < warmup {
			continue
		}
		var wall, cpu, rssKB int64
		lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
		last := lines[len(lines)-1]
		if _, err := fmt.Sscanf(last, "timeproc: %d %d %d", &wall, &cpu, &rssKB); err != nil {
			return t, fmt.Errorf("reading timeproc's figures %q: %w", last, err)
		}
		t.wall = append(t.wall, ms(time.Duration(wall)))
		t.cpu = append(t.cpu, ms(time.Duration(cpu)))
		t.rss = append(t.rss, float64(rssKB)/1024)
	}
	return t, nil
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// meanSD is the mean and sample standard deviation of vs.
func meanSD(vs []float64) (mean, sd float64) {
	for _, v := range vs {
		mean += v
	}
	mean /= float64(len(vs))
	if len(vs) < 2 {
		return mean, 0
	}
	for _, v := range vs {
		sd += (v - mean) * (v - mean)
	}
	return mean, math.Sqrt(sd / float64(len(vs)-1))
}
