package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/stratadev/strata/bench/internal/proc"
	"github.com/stratadev/strata/bench/internal/servers"
	"github.com/stratadev/strata/bench/report"
)

// StartupConfig is what Startup measures: strata-server alone, as users
// run it, on an empty data directory and on one holding Objects
// ConfigMaps of Bytes each.
type StartupConfig struct {
	// StrataServer is a prebuilt strata-server binary; unset, it is built
	// from strata's module.
	StrataServer string
	// Starts is how many starts are measured in each setting.
	Starts         int
	Objects, Bytes int
	// SkipEmpty measures the loaded setting only.
	SkipEmpty bool
	// Args are more strata-server flags (--plain-http, for one).
	Args []string
	// Work keeps the data directories and each start's log (at
	// --log-level debug, with a "start-up step done" line per step of
	// server.Start); a loaded directory left there by an earlier run is
	// reused. Unset, a temporary directory is used and removed.
	Work string
	// Progress, when set, receives a line per start.
	Progress io.Writer
}

// Startup measures strata-server's start-up to ready, the footprint's way
// (the time from starting the process to /readyz answering 200), each
// start a process of its own stopped before the next; it writes, per
// setting, the minimum, median and maximum, and each start's server CPU
// time, which a shared machine's load stretches less than the wall time.
func Startup(ctx context.Context, c StartupConfig, out io.Writer) error {
	if c.Progress == nil {
		c.Progress = io.Discard
	}
	work, cleanup, err := startupWork(c.Work)
	if err != nil {
		return err
	}
	defer cleanup()
	bin, err := servers.StrataServerBinary(ctx, c.StrataServer, c.Progress)
	if err != nil {
		return err
	}
	tokens := filepath.Join(work, "tokens.csv")
	if err := servers.WriteTokens(tokens); err != nil {
		return err
	}
	s := &starter{cfg: c, bin: bin, work: work, tokens: tokens}
	if !c.SkipEmpty {
		if err := s.measure(ctx, report.StartEmpty, out); err != nil {
			return err
		}
	}
	if c.Objects == 0 {
		return nil
	}
	if err := s.load(ctx); err != nil {
		return err
	}
	return s.measure(ctx, report.StartLoaded, out)
}

// startupWork is the work directory: dir, made if missing, or a temporary
// one that cleanup removes.
func startupWork(dir string) (string, func(), error) {
	if dir == "" {
		tmp, err := os.MkdirTemp("", "strata-startup-")
		if err != nil {
			return "", nil, fmt.Errorf("bench: temporary directory: %w", err)
		}
		return tmp, func() { os.RemoveAll(tmp) }, nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", nil, fmt.Errorf("bench: work directory: %w", err)
	}
	return dir, func() {}, nil
}

// starter starts one strata-server binary in a work directory.
type starter struct {
	cfg               StartupConfig
	bin, work, tokens string
}

// spec is the server's settings on data directory dir: strata's default
// controllers, as users run it, and its log at debug level.
func (s *starter) spec(dir string) servers.Spec {
	return servers.Spec{DataDir: dir, TokenFile: s.tokens, Args: append([]string{"--log-level", "debug"}, s.cfg.Args...)}
}

// measure times cfg.Starts starts in setting (empty: each on a new
// directory, removed after it; loaded: on the loaded one) and writes
// their summary.
func (s *starter) measure(ctx context.Context, setting string, out io.Writer) error {
	var times []float64
	for i := range s.cfg.Starts {
		dir := filepath.Join(s.work, "loaded")
		if setting == report.StartEmpty {
			dir = filepath.Join(s.work, fmt.Sprintf("empty-%d", i))
		}
		logPath := filepath.Join(s.work, fmt.Sprintf("%s-%d.log", setting, i))
		var cpu time.Duration
		seconds, err := timeStart(func() (*proc.Process, func() error, error) {
			p, _, err := servers.StartStrataServer(ctx, s.bin, s.spec(dir), logPath)
			if err != nil {
				return nil, nil, err
			}
			cpu, err = proc.CPU(p.Pid())
			return p, p.Stop, err
		})
		if err != nil {
			return fmt.Errorf("bench: start %d (%s): %w", i+1, setting, err)
		}
		fmt.Fprintf(s.cfg.Progress, "%s: ready after %.3fs, CPU %.2fs\n", filepath.Base(logPath), seconds, cpu.Seconds())
		times = append(times, seconds)
		if setting == report.StartEmpty {
			os.RemoveAll(dir)
		}
	}
	name := setting
	if setting == report.StartLoaded {
		name = fmt.Sprintf("%d ConfigMaps of %d B", s.cfg.Objects, s.cfg.Bytes)
	}
	writeStartSummary(out, name, times)
	return nil
}

// load fills the loaded directory with the ConfigMaps, unless an earlier
// run left it in the work directory.
func (s *starter) load(ctx context.Context) error {
	dir := filepath.Join(s.work, "loaded")
	if _, err := os.Stat(dir); err == nil {
		return nil
	}
	p, rc, err := servers.StartStrataServer(ctx, s.bin, s.spec(dir), filepath.Join(s.work, "load.log"))
	if err != nil {
		return err
	}
	t, err := newTarget(sideStrata, rc, p.Pid())
	if err == nil {
		err = loadConfigMaps(ctx, t, s.cfg.Objects, s.cfg.Bytes)
	}
	return errors.Join(err, p.Stop())
}

// writeStartSummary writes one setting's start-ups: min, median, max and
// each, in the order run.
func writeStartSummary(out io.Writer, setting string, times []float64) {
	s := slices.Sorted(slices.Values(times))
	runs := make([]string, len(times))
	for i, t := range times {
		runs[i] = fmt.Sprintf("%.3fs", t)
	}
	fmt.Fprintf(out, "%-28s min %6.3fs  median %6.3fs  max %6.3fs  (%d runs: %s)\n", setting,
		s[0], report.Median(times), s[len(s)-1], len(s), strings.Join(runs, " "))
}
