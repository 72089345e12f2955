// Command strata-serverload measures strata-server as users run it, on its
// embedded etcd, alternating the binaries it is given (bench.ServerLoad):
// consistent GETs and creates, their requests per second and the server
// process's CPU per request (issue 18).
//
//	strata-serverload -servers /tmp/a/strata-server,/tmp/b/strata-server [-rounds 2] [-clients 16] [-duration 8s]
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/stratadev/strata/bench"
)

func main() {
	var c bench.LoadConfig
	servers := flag.String("servers", "strata-server", "comma-separated strata-server binaries, run in turn")
	flag.IntVar(&c.Rounds, "rounds", 2, "rounds; each runs every binary once")
	flag.IntVar(&c.Clients, "clients", 16, "concurrent clients")
	flag.DurationVar(&c.Duration, "duration", 8*time.Second, "length of each operation's run")
	flag.Parse()
	c.Servers = strings.Split(*servers, ",")
	if err := bench.ServerLoad(context.Background(), c, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "strata-serverload:", err)
		os.Exit(1)
	}
}
