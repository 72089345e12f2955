// Command strata-bench measures strata server and strata's offline
// commands. Each measurement is a subcommand:
//
//	strata-bench load       the load generator: every cell against strata (and kube-apiserver), raw etcd and the floor
//	strata-bench footprint  start-up to ready and memory of strata and kube-apiserver, no cells
//	strata-bench startup    strata-server's start-up to ready, empty and loaded, start by start
//	strata-bench serverload strata-server binaries side by side under the same load, alternating
//	strata-bench commands   start-up, CPU and peak RSS of the offline commands (strata patch, diff, ...)
//	strata-bench envlist    write the 10,000-entry env-list patch inputs
//
// "strata-bench SUBCOMMAND -h" lists a subcommand's flags; bench/README.md
// says what each measures and shows the latest results.
//
// Exit status: 0 on success, 1 when a run failed or some operations
// failed (the report is printed first), 2 on a usage error.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/stratadev/strata/bench/internal/servers"
)

// subcommand runs one measurement with its arguments.
type subcommand struct {
	name, summary string
	run           func(ctx context.Context, args []string, stdout, stderr io.Writer) int
}

var subcommands = []subcommand{
	{"load", "the load generator: every cell against strata (and kube-apiserver), raw etcd and the floor", runLoad},
	{"footprint", "start-up to ready and memory of strata and kube-apiserver, no cells", runFootprint},
	{"startup", "strata-server's start-up to ready, empty and loaded, start by start", runStartup},
	{"serverload", "strata-server binaries side by side under the same load, alternating", runServerLoad},
	{"commands", "start-up, CPU and peak RSS of the offline commands (strata patch, diff, ...)", runCommands},
	{"envlist", "write the 10,000-entry env-list patch inputs", runEnvList},
}

func main() {
	servers.RunChild() // when this process is one of the benchmark's servers
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "-help" || args[0] == "--help" || args[0] == "help" {
		usage(stderr)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	for _, s := range subcommands {
		if s.name == args[0] {
			return s.run(ctx, args[1:], stdout, stderr)
		}
	}
	fmt.Fprintf(stderr, "strata-bench: unknown subcommand %q\n", args[0])
	usage(stderr)
	return 2
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: strata-bench SUBCOMMAND [flags]   (strata-bench SUBCOMMAND -h for its flags)")
	fmt.Fprintln(w)
	for _, s := range subcommands {
		fmt.Fprintf(w, "  %-11s %s\n", s.name, s.summary)
	}
}
