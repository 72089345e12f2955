package bench

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/stratadev/strata/server"
	"github.com/stratadev/strata/storage/etcd"
)

// stopTimeout bounds each step of the cleanup.
const stopTimeout = 30 * time.Second

// env is the etcd member and the strata server of one run, with a client
// of each.
type env struct {
	tmp string

	stopEtcd context.CancelFunc
	etcdDone <-chan struct{}
	raw      *clientv3.Client
	// rawWriter is a second etcd client (its own connection) for the
	// watch cells' writes.
	rawWriter *clientv3.Client

	stopServer context.CancelFunc
	running    *server.Running
	cs         kubernetes.Interface
	// writer is a second clientset, with its own connection, for the
	// watch cells' writes: as with a writer in another process, its
	// requests do not share a connection with the watches.
	writer kubernetes.Interface
	// protobuf and json are clientsets configured for one content type
	// each (protobuf.go); user is the RBAC cells' user (rbac.go).
	protobuf, json, user kubernetes.Interface

	// floor is the bare HTTP/2 server of the create-floor cells
	// (floor.go), started by the runner once it knows the stored bytes.
	floor *floor
	// admissionOff is the second server of the admission cells
	// (admission.go), started by their first preparation.
	admissionOff *strataServer
}

// startEnv starts etcd in a temporary directory (fsync on) and strata
// server on it, both on loopback with free ports.
func startEnv(ctx context.Context) (*env, error) {
	tmp, err := os.MkdirTemp("", "strata-bench-")
	if err != nil {
		return nil, fmt.Errorf("bench: temporary directory: %w", err)
	}
	e := &env{tmp: tmp}
	if err := e.startEtcd(ctx); err != nil {
		return nil, errors.Join(err, e.close())
	}
	if err := e.startServer(ctx); err != nil {
		return nil, errors.Join(err, e.close())
	}
	return e, nil
}

func (e *env) startEtcd(ctx context.Context) error {
	cfg, err := etcd.Options{DataDir: filepath.Join(e.tmp, "etcd"), LogLevel: "fatal"}.Complete()
	if err != nil {
		return fmt.Errorf("bench: etcd options: %w", err)
	}
	srv := etcd.NewServer(cfg)
	// The member outlives ctx's cancellation until close stops it, after
	// the server that uses it.
	etcdCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
	if err := srv.Run(etcdCtx); err != nil {
		stop()
		return fmt.Errorf("bench: starting etcd: %w", err)
	}
	e.stopEtcd, e.etcdDone = stop, srv.Done()
	if e.raw, err = srv.Client(); err != nil {
		return fmt.Errorf("bench: etcd client: %w", err)
	}
	if e.rawWriter, err = srv.Client(); err != nil {
		return fmt.Errorf("bench: etcd client: %w", err)
	}
	return nil
}

func (e *env) startServer(ctx context.Context) error {
	o := e.serverOptions("strata")
	o.TokenAuthFile = filepath.Join(e.tmp, "tokens.csv")
	if err := os.WriteFile(o.TokenAuthFile, []byte(benchUserToken+","+benchUser+",uid-bench\n"), 0o600); err != nil {
		return fmt.Errorf("bench: token file: %w", err)
	}
	stop, running, cfg, err := startStrata(ctx, o)
	if err != nil {
		return err
	}
	e.stopServer, e.running = stop, running
	if e.cs, err = kubernetes.NewForConfig(cfg); err != nil {
		return fmt.Errorf("bench: client-go clientset: %w", err)
	}
	if e.protobuf, err = clientsetFor(cfg, runtime.ContentTypeProtobuf); err != nil {
		return err
	}
	if e.json, err = clientsetFor(cfg, runtime.ContentTypeJSON); err != nil {
		return err
	}
	ucfg := rest.AnonymousClientConfig(cfg)
	ucfg.BearerToken = benchUserToken
	if e.user, err = kubernetes.NewForConfig(ucfg); err != nil {
		return fmt.Errorf("bench: client-go clientset: %w", err)
	}
	// client-go shares a transport between configs unless they have a
	// Dial function (which it cannot compare).
	wcfg := rest.CopyConfig(cfg)
	wcfg.Dial = (&net.Dialer{}).DialContext
	if e.writer, err = kubernetes.NewForConfig(wcfg); err != nil {
		return fmt.Errorf("bench: client-go clientset: %w", err)
	}
	return nil
}

// serverOptions are a strata server's on the run's etcd, its data in
// the directory dir of the run's.
func (e *env) serverOptions(dir string) *server.Options {
	o := server.NewOptions()
	o.DataDir = filepath.Join(e.tmp, dir)
	o.EtcdServers = e.raw.Endpoints()
	o.BindAddress = "127.0.0.1"
	o.SecurePort = 0
	o.CompactionInterval = -1 // no compaction in the middle of a cell
	o.ShutdownTimeout = 10 * time.Second
	o.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	return o
}

// startStrata starts a server with o (it outlives ctx's cancellation until
// stop) and returns its admin's client configuration, without client-side
// rate limits.
func startStrata(ctx context.Context, o *server.Options) (context.CancelFunc, *server.Running, *rest.Config, error) {
	srvCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
	running, err := server.Start(srvCtx, o)
	if err != nil {
		stop()
		return nil, nil, nil, fmt.Errorf("bench: starting strata server: %w", err)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", running.Kubeconfig)
	if err != nil {
		stop()
		return nil, nil, nil, fmt.Errorf("bench: kubeconfig %s: %w", running.Kubeconfig, err)
	}
	cfg.QPS, cfg.Burst = -1, 1<<20 // no client-side rate limit
	cfg.UserAgent = "strata-bench"
	return stop, running, cfg, nil
}

// close stops the servers, then etcd, and removes the temporary directory.
func (e *env) close() error {
	var errs []error
	e.floor.close()
	if err := e.admissionOff.close(); err != nil {
		errs = append(errs, err)
	}
	if e.stopServer != nil {
		e.stopServer()
		if err := waitFor(e.running.Wait, "strata server"); err != nil {
			errs = append(errs, err)
		}
	}
	for _, c := range []*clientv3.Client{e.raw, e.rawWriter} {
		if c == nil {
			continue
		}
		if err := c.Close(); err != nil && !errors.Is(err, context.Canceled) {
			errs = append(errs, fmt.Errorf("bench: closing an etcd client: %w", err))
		}
	}
	if e.stopEtcd != nil {
		e.stopEtcd()
		if err := waitFor(func() error { <-e.etcdDone; return nil }, "etcd"); err != nil {
			errs = append(errs, err)
		}
	}
	if err := os.RemoveAll(e.tmp); err != nil {
		errs = append(errs, fmt.Errorf("bench: removing %s: %w", e.tmp, err))
	}
	return errors.Join(errs...)
}

// waitFor waits for wait to return, at most stopTimeout.
func waitFor(wait func() error, what string) error {
	done := make(chan error, 1)
	go func() { done <- wait() }()
	select {
	case err := <-done:
		if err != nil {
			return fmt.Errorf("bench: stopping %s: %w", what, err)
		}
		return nil
	case <-time.After(stopTimeout):
		return fmt.Errorf("bench: %s did not stop within %s", what, stopTimeout)
	}
}
