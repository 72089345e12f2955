package bench

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/stratadev/strata/bench/internal/proc"
	"github.com/stratadev/strata/bench/internal/servers"
	"github.com/stratadev/strata/server"
)

// stopTimeout bounds each step of the cleanup.
const stopTimeout = 30 * time.Second

// env is one run's etcd members and API servers: strata's etcd (which the
// raw etcd cells use too) and strata, and kube-apiserver's own etcd and
// kube-apiserver when they are selected.
type env struct {
	tmp string

	etcd *servers.Member
	raw  *clientv3.Client
	// rawWriter is a second etcd client (its own connection) for the
	// watch cells' writes.
	rawWriter *clientv3.Client

	// strata runs as a child process (strataProc) unless Config.InProcess
	// is set (stopServer and running).
	strataProc *proc.Process
	stopServer context.CancelFunc
	running    *server.Running

	kubeEtcd *servers.Member
	kubeProc *proc.Process

	// strata and kube are the API servers the cells drive (nil: not
	// selected).
	strata, kube *target

	// admissionOn and admissionOff are the admission cells' strata
	// servers (admission.go), started by their first preparation.
	admissionOn, admissionOff *target
	admissionProcs            []*proc.Process

	// floor is the bare HTTP/2 server of the floor cells (bench/floor),
	// started by the runner once it knows the stored bytes.
	floor *floorServer

	// controllers is the strata servers' --controllers (controllers.go).
	controllers []string
}

// startEnv starts strata's etcd (fsync on) in a temporary directory and
// the selected servers, all on loopback with free ports.
func startEnv(ctx context.Context, cfg Config) (*env, error) {
	tmp, err := os.MkdirTemp("", "strata-bench-")
	if err != nil {
		return nil, fmt.Errorf("bench: temporary directory: %w", err)
	}
	e := &env{tmp: tmp, controllers: cfg.strataControllers()}
	if err := e.start(ctx, cfg); err != nil {
		return nil, errors.Join(err, e.close())
	}
	return e, nil
}

func (e *env) start(ctx context.Context, cfg Config) error {
	tokens := e.tokens()
	if err := servers.WriteTokens(tokens); err != nil {
		return err
	}
	if cfg.NoCells {
		return nil // the footprint starts servers of its own
	}
	var err error
	if e.etcd, err = servers.StartMember(ctx, filepath.Join(e.tmp, "etcd")); err != nil {
		return err
	}
	e.raw = e.etcd.Client
	if e.rawWriter, err = servers.Client(e.etcd.Endpoints); err != nil {
		return err
	}
	if cfg.runs(sideStrata) {
		if err := e.startStrata(ctx, cfg); err != nil {
			return err
		}
	}
	if cfg.runs(sideKube) {
		if err := e.startKube(ctx, cfg, tokens); err != nil {
			return err
		}
	}
	return nil
}

// startStrata starts strata server on strata's etcd: as a child process,
// so that its CPU time can be read from /proc apart from etcd's and the
// clients', or in this process when Config.InProcess is set.
func (e *env) startStrata(ctx context.Context, cfg Config) error {
	spec := e.strataSpec(filepath.Join(e.tmp, "strata"), e.etcd.Endpoints)
	if !cfg.InProcess {
		p, rc, err := servers.StartStrataChild(ctx, spec, filepath.Join(e.tmp, "strata.log"))
		if err != nil {
			return err
		}
		e.strataProc = p
		e.strata, err = newTarget(sideStrata, rc, p.Pid())
		return err
	}
	o := spec.Options(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	srvCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
	running, err := server.Start(srvCtx, o)
	if err != nil {
		stop()
		return fmt.Errorf("bench: starting strata server: %w", err)
	}
	e.stopServer, e.running = stop, running
	rc, err := clientcmd.BuildConfigFromFlags("", running.Kubeconfig)
	if err != nil {
		return fmt.Errorf("bench: kubeconfig %s: %w", running.Kubeconfig, err)
	}
	e.strata, err = newTarget(sideStrata, rc, 0)
	return err
}

// startKube starts kube-apiserver's own etcd member and kube-apiserver on
// it, as strata's: RBAC, the same token file, loopback.
func (e *env) startKube(ctx context.Context, cfg Config, tokens string) error {
	bin, err := servers.KubeAPIServer(ctx, cfg.KubeAPIServer, cfg.Progress)
	if err != nil {
		return err
	}
	if e.kubeEtcd, err = servers.StartMember(ctx, filepath.Join(e.tmp, "kube-etcd")); err != nil {
		return err
	}
	k, err := servers.StartKubeAPIServer(ctx, bin, filepath.Join(e.tmp, "kube"), e.kubeEtcd.Endpoints, tokens)
	if err != nil {
		return err
	}
	e.kubeProc = k.Proc
	e.kube, err = newTarget(sideKube, k.Config, k.Proc.Pid())
	return err
}

// targets are the selected servers, strata first.
func (e *env) targets() []*target {
	var ts []*target
	for _, t := range []*target{e.strata, e.kube} {
		if t != nil {
			ts = append(ts, t)
		}
	}
	return ts
}

// close stops the servers, then etcd, and removes the temporary directory.
func (e *env) close() error {
	errs := []error{e.stopServers()}
	if e.rawWriter != nil {
		if err := e.rawWriter.Close(); err != nil && !errors.Is(err, context.Canceled) {
			errs = append(errs, fmt.Errorf("bench: closing an etcd client: %w", err))
		}
	}
	errs = append(errs, e.kubeEtcd.Close(), e.etcd.Close())
	if err := os.RemoveAll(e.tmp); err != nil {
		errs = append(errs, fmt.Errorf("bench: removing %s: %w", e.tmp, err))
	}
	return errors.Join(errs...)
}

// stopServers stops the cells' servers (the floor, strata, kube-apiserver
// and the admission cells' servers), not their etcd members, and forgets
// them, so that a second call does nothing. The footprint, which starts
// servers of its own, runs after it: servers left idle beside it still
// run their own loops on the machine's two cores, and the footprint's
// start-up times are each server's alone.
func (e *env) stopServers() error {
	errs := []error{e.floor.close()}
	for _, p := range e.admissionProcs {
		errs = append(errs, p.Stop())
	}
	errs = append(errs, e.kubeProc.Stop(), e.strataProc.Stop())
	if e.stopServer != nil {
		e.stopServer()
		if err := proc.WaitFor(e.running.Wait, "strata server"); err != nil {
			errs = append(errs, err)
		}
	}
	e.floor, e.admissionProcs, e.kubeProc, e.strataProc, e.stopServer = nil, nil, nil, nil, nil
	return errors.Join(errs...)
}

// strataSpec is a strata server's child spec: on dir, with the run's
// tokens and controllers, on etcdServers (none: its embedded etcd).
func (e *env) strataSpec(dir string, etcdServers []string) servers.Spec {
	return servers.Spec{Mode: servers.ModeStrata, DataDir: dir, EtcdServers: etcdServers,
		TokenFile: e.tokens(), Controllers: e.controllers}
}

// tokens is the run's token file, which both servers authenticate with.
func (e *env) tokens() string { return filepath.Join(e.tmp, "tokens.csv") }
