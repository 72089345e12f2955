// Package etcdtest runs a package's tests against one embedded etcd
// member, as the packages above storage test against a real etcd.
package etcdtest

import (
	"context"
	"fmt"
	"os"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/stratadev/strata/storage/etcd"
)

// Main starts an embedded etcd member in a temporary directory, without
// fsync (a test's data need not survive a crash), sets *client to a
// client of it, runs m and stops the member. It returns the exit code for
// os.Exit; TestMain calls it.
func Main(m *testing.M, client **clientv3.Client) int {
	dir, err := os.MkdirTemp("", "strata-etcdtest-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cfg, err := etcd.Options{DataDir: dir, UnsafeNoFsync: true, LogLevel: "fatal"}.Complete()
	if err != nil {
		fmt.Fprintln(os.Stderr, fmt.Errorf("etcdtest: %w", err))
		return 1
	}
	srv := etcd.NewServer(cfg)
	if err := srv.Run(ctx); err != nil {
		fmt.Fprintln(os.Stderr, fmt.Errorf("etcdtest: %w", err))
		return 1
	}
	defer func() { cancel(); <-srv.Done() }()
	c, err := srv.Client()
	if err != nil {
		fmt.Fprintln(os.Stderr, fmt.Errorf("etcdtest: %w", err))
		return 1
	}
	defer c.Close()
	*client = c
	return m.Run()
}

// Start runs an embedded etcd member of the test's own in a temporary
// directory, without fsync, and returns a client of it; both stop when
// the test ends.
func Start(t testing.TB) *clientv3.Client {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cfg, err := etcd.Options{DataDir: t.TempDir(), UnsafeNoFsync: true, LogLevel: "fatal"}.Complete()
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	srv := etcd.NewServer(cfg)
	if err := srv.Run(ctx); err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); <-srv.Done() })
	client, err := srv.Client()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	return client
}
