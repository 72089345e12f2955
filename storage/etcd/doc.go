// Package etcd starts the etcd that strata's storage layer talks to, or
// describes how to reach an external one.
//
// By default strata runs an embedded etcd member (go.etcd.io/etcd/server/v3/embed)
// with its data in a directory of the caller's choosing, so that one command
// runs everything. The member opens no TCP port: its clients reach it through
// a unix socket in that directory (mode 0700), and a single member listens for
// no peers. Explicit ports (ClientPort, PeerPort, InitialCluster) put it on
// loopback TCP instead, for multi-member test clusters. When Options.Servers is
// set, nothing is started and the client connects to that external cluster
// instead, optionally with TLS (CAFile, CertFile, KeyFile).
//
// Before the member starts, its directory is locked against a second process
// and checked for the damage etcd would hang or panic on (datadir.go; the
// write-ahead log, read once, in walcheck.go).
//
// The shape follows the k8s.io/apiserver pattern: Options (what a user or a flag
// set says) → Complete → Config (validated, sockets or ports chosen) → NewServer
// → Run(ctx). Run returns once etcd is ready, or with an error that names the
// data directory or the damaged file; the member stops when the context ends.
// All access goes through clientv3: Server.Client builds one.
package etcd
