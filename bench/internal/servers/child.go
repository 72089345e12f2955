// Package servers starts the servers the bench measures: strata as a child
// of the bench's own binary or as the strata-server binary, etcd members in
// this process or in a child, the floor server in a child, and
// kube-apiserver; and the token file they all authenticate with.
//
// strata's and the stand-alone etcd members' children are this program
// itself, re-executed with ChildEnv naming what to run (so no second binary
// has to be built, and strata's child calls server.Start with the options
// strata-server would give it); kube-apiserver is its own binary (StartKubeAPIServer).
package servers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/stratadev/strata/bench/floor"
	"github.com/stratadev/strata/bench/internal/proc"
	"github.com/stratadev/strata/server"
	"github.com/stratadev/strata/storage/etcd"
)

// ChildEnv holds a re-executed child's Spec, as JSON.
const ChildEnv = "STRATA_BENCH_CHILD"

// Child modes.
const (
	ModeStrata = "strata"
	ModeEtcd   = "etcd"
	ModeFloor  = "floor"
)

// Spec is what a re-executed child runs, and the settings of a
// strata-server the bench starts (StartStrataServer).
type Spec struct {
	Mode    string
	DataDir string
	// EtcdServers: strata's external etcd (none: strata embeds its own).
	EtcdServers []string
	TokenFile   string
	// DisableAdmission is --disable-admission-plugins.
	DisableAdmission []string `json:",omitempty"`
	// Controllers is --controllers (none: strata's default).
	Controllers []string `json:",omitempty"`
	// Args are more strata-server flags (StartStrataServer only).
	Args []string `json:",omitempty"`
	// Value is what the floor stores and answers.
	Value string `json:",omitempty"`
}

// RunChild runs the child process this program was started as, if it was
// (the environment says so), and exits; otherwise it returns at once.
// strata-bench's main and the bench packages' TestMain call it first.
func RunChild() {
	s := os.Getenv(ChildEnv)
	if s == "" {
		return
	}
	var spec Spec
	err := json.Unmarshal([]byte(s), &spec)
	if err == nil {
		err = spec.run()
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "strata-bench child: %v\n", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// run runs the child until SIGTERM; it prints "ready" on stdout once it
// serves.
func (s Spec) run() error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	switch s.Mode {
	case ModeStrata:
		running, err := server.Start(ctx, s.Options(WarnLogger()))
		if err != nil {
			return fmt.Errorf("starting strata server: %w", err)
		}
		fmt.Println("ready")
		return running.Wait()
	case ModeEtcd:
		cfg, err := etcd.Options{DataDir: s.DataDir, LogLevel: "fatal"}.Complete()
		if err != nil {
			return fmt.Errorf("etcd options: %w", err)
		}
		srv := etcd.NewServer(cfg)
		if err := srv.Run(ctx); err != nil {
			return fmt.Errorf("starting etcd: %w", err)
		}
		fmt.Println("ready", strings.Join(srv.Endpoints(), ","))
		<-srv.Done()
		return nil
	case ModeFloor:
		return s.runFloor(ctx)
	}
	return fmt.Errorf("unknown child mode %q", s.Mode)
}

// runFloor serves the floor until ctx ends; its ready line carries the
// server's URL.
func (s Spec) runFloor(ctx context.Context) error {
	raw, err := Client(s.EtcdServers)
	if err != nil {
		return err
	}
	defer raw.Close()
	srv, err := floor.Serve(raw, s.Value)
	if err != nil {
		return err
	}
	defer srv.Close()
	fmt.Println("ready", srv.URL)
	<-ctx.Done()
	return nil
}

// WarnLogger is the log of a strata server the bench runs: warnings and
// errors only, on stderr (the child's log file).
func WarnLogger() *slog.Logger {
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

// Options are strata server's options for the bench: loopback, a free
// port, no compaction in the middle of a cell.
func (s Spec) Options(log *slog.Logger) *server.Options {
	o := server.NewOptions()
	o.DataDir = s.DataDir
	o.EtcdServers = s.EtcdServers
	o.BindAddress = "127.0.0.1"
	o.SecurePort = 0
	o.CompactionInterval = -1
	o.ShutdownTimeout = 10 * time.Second
	o.Logger = log
	o.TokenAuthFile = s.TokenFile
	o.Admission.Disable = s.DisableAdmission
	if s.Controllers != nil {
		o.Controllers = s.Controllers
	}
	return o
}

// StartChild re-executes this program as spec describes and waits for its
// ready line, whose words after "ready" it returns.
func StartChild(ctx context.Context, spec Spec, logPath string) (*proc.Process, string, error) {
	return proc.StartSelf(ctx, spec.Mode, ChildEnv, spec, logPath)
}

// StartStrataChild starts strata server as a child and waits until its
// /readyz answers.
func StartStrataChild(ctx context.Context, spec Spec, logPath string) (*proc.Process, *rest.Config, error) {
	p, _, err := StartChild(ctx, spec, logPath)
	if err != nil {
		return nil, nil, err
	}
	kubeconfig := spec.DataDir + "/kubeconfig"
	rc, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, nil, errors.Join(fmt.Errorf("servers: kubeconfig %s: %w", kubeconfig, err), p.Stop())
	}
	if err := proc.WaitReady(ctx, p, rc); err != nil {
		return nil, nil, errors.Join(err, p.Stop())
	}
	return p, rc, nil
}
