// Package etcd starts the etcd that strata's storage layer talks to, or
// describes how to reach an external one.
//
// By default strata runs an embedded etcd member (go.etcd.io/etcd/server/v3/embed)
// listening on loopback only, with its data in a directory of the caller's
// choosing, so that one command runs everything. When Options.Servers is set,
// nothing is started and the client connects to that external cluster instead,
// optionally with TLS (CAFile, CertFile, KeyFile).
//
// The shape follows the k8s.io/apiserver pattern: Options (what a user or a flag
// set says) → Complete → Config (validated, ports chosen) → NewServer → Run(ctx).
// Run returns once etcd is ready, or with an error that names the data directory
// and the timeout; the member stops when the context ends. All access goes
// through clientv3: Server.Client builds one.
package etcd
