package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/stratadev/strata/bench"
)

// runStartup is "strata-bench startup": strata-server's start-up to ready,
// on an empty data directory and on one holding -objects ConfigMaps, each
// start a process of its own (bench.Startup).
func runStartup(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var (
		c         bench.StartupConfig
		plainHTTP bool
	)
	fs := flag.NewFlagSet("strata-bench startup", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.StrataServer, "strata-server", "", "prebuilt strata-server binary (default: go build ./cmd/strata-server of strata's module)")
	fs.IntVar(&c.Starts, "starts", 5, "starts measured in each setting")
	fs.IntVar(&c.Objects, "objects", 20000, "ConfigMaps loaded for the loaded setting (0: empty only)")
	fs.IntVar(&c.Bytes, "bytes", 1024, "payload bytes of each ConfigMap")
	fs.BoolVar(&plainHTTP, "plain-http", false, "start the server with --plain-http")
	fs.BoolVar(&c.SkipEmpty, "skip-empty", false, "measure only the loaded setting")
	fs.StringVar(&c.Work, "work", "", "work directory, kept, with each start's log at --log-level debug (default: a temporary one, removed after)")
	timeout := fs.Duration("timeout", 30*time.Minute, "bound on the whole run")
	if code, ok := parse(fs, args, stderr); !ok {
		return code
	}
	if plainHTTP {
		c.Args = append(c.Args, "--plain-http")
	}
	c.Progress = stderr
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	if err := bench.Startup(ctx, c, stdout); err != nil {
		fmt.Fprintln(stderr, "strata-bench startup:", err)
		return 1
	}
	return 0
}
