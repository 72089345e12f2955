package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/stratadev/strata/server"
	"github.com/stratadev/strata/storage/etcd"
)

// The servers whose CPU time or memory is measured run as child processes.
// strata's and the stand-alone etcd members are this program itself,
// re-executed with childEnv naming what to run (so no second binary has to
// be built, and strata's child calls server.Start with the options
// strata-server would give it); kube-apiserver is its own binary (kube.go).

// childEnv holds a re-executed child's childSpec, as JSON.
const childEnv = "STRATA_BENCH_CHILD"

// Child modes.
const (
	childStrata = "strata"
	childEtcd   = "etcd"
)

// startTimeout bounds a child's start-up until it is ready.
const startTimeout = 3 * time.Minute

// childSpec is what a re-executed child runs.
type childSpec struct {
	Mode    string
	DataDir string
	// EtcdServers: strata's external etcd (none: strata embeds its own).
	EtcdServers []string
	TokenFile   string
	// DisableAdmission is --disable-admission-plugins (admission.go).
	DisableAdmission []string `json:",omitempty"`
	// Controllers is --controllers (none: strata's default).
	Controllers []string `json:",omitempty"`
	// Value is what the floor stores and answers (floor.go).
	Value string `json:",omitempty"`
}

// RunChild runs the child process this program was started as, if it was
// (the environment says so), and exits; otherwise it returns at once.
// strata-bench's main and the package's TestMain call it first.
func RunChild() {
	s := os.Getenv(childEnv)
	if s == "" {
		return
	}
	var spec childSpec
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
func (s childSpec) run() error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	switch s.Mode {
	case childStrata:
		o := s.options(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
		running, err := server.Start(ctx, o)
		if err != nil {
			return fmt.Errorf("starting strata server: %w", err)
		}
		fmt.Println("ready")
		return running.Wait()
	case childEtcd:
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
	case childFloor:
		return s.runFloor(ctx)
	}
	return fmt.Errorf("unknown child mode %q", s.Mode)
}

// runFloor serves the floor (floor.go) until ctx ends; its ready line
// carries the server's URL.
func (s childSpec) runFloor(ctx context.Context) error {
	cfg, err := etcd.Options{Servers: s.EtcdServers}.Complete()
	if err != nil {
		return fmt.Errorf("etcd options: %w", err)
	}
	raw, err := cfg.Client()
	if err != nil {
		return fmt.Errorf("etcd client: %w", err)
	}
	defer raw.Close()
	srv, err := serveFloor(raw, s.Value)
	if err != nil {
		return err
	}
	defer srv.Close()
	fmt.Println("ready", srv.URL)
	<-ctx.Done()
	return nil
}

// options are strata server's options for the bench: loopback, a free
// port, no compaction in the middle of a cell.
func (s childSpec) options(log *slog.Logger) *server.Options {
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

// process is a child process, in a process group of its own, killed
// with this process (Pdeathsig).
type process struct {
	name    string
	cmd     *exec.Cmd
	started time.Time
	logPath string
	// stdout carries the child's "ready" line; done is closed when it has
	// exited.
	stdout *bufio.Reader
	done   chan struct{}
	err    error
}

// startProcess starts path with args and extra environment, its stderr
// to logPath.
func startProcess(name, path string, args, env []string, logPath string) (*process, error) {
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("bench: %s log: %w", name, err)
	}
	cmd := exec.Command(path, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	out, err := cmd.StdoutPipe()
	if err != nil {
		logf.Close()
		return nil, fmt.Errorf("bench: %s stdout: %w", name, err)
	}
	p := &process{name: name, cmd: cmd, logPath: logPath, stdout: bufio.NewReader(out), done: make(chan struct{})}
	p.started = time.Now()
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("bench: starting %s (%s): %w", name, path, err)
	}
	go func() {
		p.err = cmd.Wait()
		logf.Close()
		close(p.done)
	}()
	return p, nil
}

// startChild re-executes this program as the child spec describes and
// waits for its ready line, whose words after "ready" it returns.
func startChild(ctx context.Context, spec childSpec, logPath string) (*process, string, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, "", fmt.Errorf("bench: finding this program to re-execute: %w", err)
	}
	js, err := json.Marshal(spec)
	if err != nil {
		return nil, "", fmt.Errorf("bench: encoding the child's spec: %w", err)
	}
	// A test binary must not run its tests in the child: -test.run
	// matches none, although RunChild exits before they would start.
	p, err := startProcess(spec.Mode, self, []string{"-test.run=^$"}, []string{childEnv + "=" + string(js)}, logPath)
	if err != nil {
		return nil, "", err
	}
	line := make(chan string, 1)
	go func() {
		l, _ := p.stdout.ReadString('\n')
		line <- strings.TrimSpace(l)
		io.Copy(io.Discard, p.stdout) // the child must never block on stdout
	}()
	select {
	case l := <-line:
		if rest, ok := strings.CutPrefix(l, "ready"); ok {
			return p, strings.TrimSpace(rest), nil
		}
		return nil, "", errors.Join(p.failed("did not start"), p.stop())
	case <-ctx.Done():
		return nil, "", errors.Join(fmt.Errorf("bench: starting %s: %w", spec.Mode, ctx.Err()), p.stop())
	case <-time.After(startTimeout):
		return nil, "", errors.Join(p.failed("was not ready within "+startTimeout.String()), p.stop())
	}
}

// startStrataChild starts strata server as a child and waits until its
// /readyz answers.
func startStrataChild(ctx context.Context, spec childSpec, logPath string) (*process, *rest.Config, error) {
	p, _, err := startChild(ctx, spec, logPath)
	if err != nil {
		return nil, nil, err
	}
	kubeconfig := spec.DataDir + "/kubeconfig"
	rc, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, nil, errors.Join(fmt.Errorf("bench: kubeconfig %s: %w", kubeconfig, err), p.stop())
	}
	if err := waitReady(ctx, p, rc); err != nil {
		return nil, nil, errors.Join(err, p.stop())
	}
	return p, rc, nil
}

// failed is an error saying the process failed, with its log's end.
func (p *process) failed(what string) error {
	b, _ := os.ReadFile(p.logPath)
	const tail = 3000
	if len(b) > tail {
		b = b[len(b)-tail:]
	}
	return fmt.Errorf("bench: %s %s; the end of its log (%s):\n%s", p.name, what, p.logPath, b)
}

// stop sends SIGTERM to the process's group, and SIGKILL if it has not
// exited within stopTimeout.
func (p *process) stop() error {
	if p == nil {
		return nil
	}
	pgid := p.cmd.Process.Pid
	if err := syscall.Kill(-pgid, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("bench: stopping %s (process group %d): %w", p.name, pgid, err)
	}
	select {
	case <-p.done:
		return nil
	case <-time.After(stopTimeout):
	}
	syscall.Kill(-pgid, syscall.SIGKILL)
	<-p.done
	return fmt.Errorf("bench: %s (process %d) did not stop within %s of SIGTERM: killed", p.name, pgid, stopTimeout)
}

// waitReady polls the server's /readyz until it answers 200, the process
// exits or startTimeout passes since the process started.
func waitReady(ctx context.Context, p *process, rc *rest.Config) error {
	hc, err := rest.HTTPClientFor(rc)
	if err != nil {
		return fmt.Errorf("bench: HTTP client of %s: %w", p.name, err)
	}
	defer hc.CloseIdleConnections()
	return pollStarting(ctx, p, 20*time.Millisecond, "to be ready", "was not ready", func() bool {
		resp, err := hc.Get(rc.Host + "/readyz")
		if err != nil {
			return false
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
}

// pollStarting calls done every interval until it reports true, or the
// starting process p exits, ctx ends or startTimeout passes since p
// started. waiting and late say in the errors what p was waited for ("to
// be ready") and what it failed to do ("was not ready").
func pollStarting(ctx context.Context, p *process, every time.Duration, waiting, late string, done func() bool) error {
	for !done() {
		select {
		case <-p.done:
			return p.failed("exited while starting")
		case <-ctx.Done():
			return fmt.Errorf("bench: waiting for %s %s: %w", p.name, waiting, ctx.Err())
		case <-time.After(every):
		}
		if time.Since(p.started) > startTimeout {
			return p.failed(late + " within " + startTimeout.String())
		}
	}
	return nil
}
