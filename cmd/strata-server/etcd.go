package main

import (
	"slices"
	"strings"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

// singleMemberTicks are the raft timings strata-server's etcd takes unless
// told otherwise, as strata server's embedded member does
// (storage/etcd): a member that is its cluster's only voter serves
// nothing until it has elected itself, after an election timeout, and
// has no peer to time out. envtest starts exactly such a member.
var singleMemberTicks = []string{"--heartbeat-interval=10", "--election-timeout=50"}

// runEtcd is strata-server invoked as etcd: etcd's own command (etcdmain),
// with its flags, help and exit codes, which envtest starts as its etcd.
// It does not return.
func runEtcd(args []string) {
	etcdmain.Main(append([]string{"etcd"}, etcdArgs(args)...))
}

// etcdArgs adds singleMemberTicks to args unless they set either timing
// or name an initial cluster of several members.
func etcdArgs(args []string) []string {
	own := slices.ContainsFunc(args, func(a string) bool {
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		return name == "heartbeat-interval" || name == "election-timeout" || name == "initial-cluster" ||
			name == "discovery" || name == "discovery-srv" || name == "config-file" || name == "help" || name == "h" ||
			name == "version"
	})
	if own {
		return args
	}
	return append(slices.Clone(singleMemberTicks), args...)
}
