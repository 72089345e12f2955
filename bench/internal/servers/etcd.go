package servers

import (
	"context"
	"errors"
	"fmt"
	"strings"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/stratadev/strata/bench/internal/proc"
	"github.com/stratadev/strata/storage/etcd"
)

// Member is an embedded etcd member (fsync on) in this process.
type Member struct {
	stop   context.CancelFunc
	done   <-chan struct{}
	Client *clientv3.Client
	// Endpoints are its client URLs (a unix socket).
	Endpoints []string
}

// StartMember starts an etcd member in dir. It outlives ctx's cancellation
// until Close stops it, after the servers that use it.
func StartMember(ctx context.Context, dir string) (*Member, error) {
	cfg, err := etcd.Options{DataDir: dir, LogLevel: "fatal"}.Complete()
	if err != nil {
		return nil, fmt.Errorf("servers: etcd options: %w", err)
	}
	srv := etcd.NewServer(cfg)
	etcdCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
	if err := srv.Run(etcdCtx); err != nil {
		stop()
		return nil, fmt.Errorf("servers: starting etcd in %s: %w", dir, err)
	}
	m := &Member{stop: stop, done: srv.Done(), Endpoints: srv.Endpoints()}
	if m.Client, err = srv.Client(); err != nil {
		return nil, errors.Join(fmt.Errorf("servers: etcd client: %w", err), m.Close())
	}
	return m, nil
}

// Close closes the member's client and stops it; closing a nil Member
// does nothing.
func (m *Member) Close() error {
	if m == nil {
		return nil
	}
	var errs []error
	if m.Client != nil {
		if err := m.Client.Close(); err != nil && !errors.Is(err, context.Canceled) {
			errs = append(errs, fmt.Errorf("servers: closing an etcd client: %w", err))
		}
	}
	m.stop()
	errs = append(errs, proc.WaitFor(func() error { <-m.done; return nil }, "etcd"))
	return errors.Join(errs...)
}

// EtcdChild is an etcd member in a child process.
type EtcdChild struct {
	Proc      *proc.Process
	Endpoints []string
}

// StartEtcdChild starts an etcd member on dir in a child process and waits
// until it serves.
func StartEtcdChild(ctx context.Context, dir, logPath string) (*EtcdChild, error) {
	p, ready, err := StartChild(ctx, Spec{Mode: ModeEtcd, DataDir: dir}, logPath)
	if err != nil {
		return nil, err
	}
	return &EtcdChild{Proc: p, Endpoints: strings.Split(ready, ",")}, nil
}

// Client is a new etcd client of the member at endpoints (a member in
// another process, or a second connection to one in this process).
func Client(endpoints []string) (*clientv3.Client, error) {
	cfg, err := etcd.Options{Servers: endpoints}.Complete()
	if err != nil {
		return nil, fmt.Errorf("servers: etcd options: %w", err)
	}
	cli, err := cfg.Client()
	if err != nil {
		return nil, fmt.Errorf("servers: etcd client: %w", err)
	}
	return cli, nil
}
