package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/stratadev/strata/bench"
)

// runServerLoad is "strata-bench serverload": strata-server as users run
// it, on its embedded etcd, alternating the binaries it is given
// (bench.ServerLoad): consistent GETs and creates, their requests per
// second and the server process's CPU per request.
func runServerLoad(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var c bench.LoadConfig
	fs := flag.NewFlagSet("strata-bench serverload", flag.ContinueOnError)
	fs.SetOutput(stderr)
	servers := fs.String("servers", "strata-server", "comma-separated strata-server binaries, run in turn")
	fs.IntVar(&c.Rounds, "rounds", 2, "rounds; each runs every binary once")
	fs.IntVar(&c.Clients, "clients", 16, "concurrent clients")
	fs.DurationVar(&c.Duration, "duration", 8*time.Second, "length of each operation's run")
	if code, ok := parse(fs, args, stderr); !ok {
		return code
	}
	c.Servers = strings.Split(*servers, ",")
	if err := bench.ServerLoad(ctx, c, stdout); err != nil {
		fmt.Fprintln(stderr, "strata-bench serverload:", err)
		return 1
	}
	return 0
}
