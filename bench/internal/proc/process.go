package proc

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// StartTimeout bounds a process's start-up until it is ready; StopTimeout
// bounds its stop after SIGTERM, and each step of a cleanup.
const (
	StartTimeout = 3 * time.Minute
	StopTimeout  = 30 * time.Second
)

// Process is a child process, in a process group of its own, killed with
// this process (Pdeathsig).
type Process struct {
	Name string
	Cmd  *exec.Cmd
	// Started is when it was started; a caller timing a server that
	// needs another process first (its etcd member) may move it back.
	Started time.Time
	LogPath string
	// Stdout carries the child's "ready" line; done is closed when it has
	// exited.
	Stdout *bufio.Reader
	done   chan struct{}
	err    error
}

// Start starts path with args and extra environment, its stderr to
// logPath.
func Start(name, path string, args, env []string, logPath string) (*Process, error) {
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("proc: %s log: %w", name, err)
	}
	cmd := exec.Command(path, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	out, err := cmd.StdoutPipe()
	if err != nil {
		logf.Close()
		return nil, fmt.Errorf("proc: %s stdout: %w", name, err)
	}
	p := &Process{Name: name, Cmd: cmd, LogPath: logPath, Stdout: bufio.NewReader(out), done: make(chan struct{})}
	p.Started = time.Now()
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("proc: starting %s (%s): %w", name, path, err)
	}
	go func() {
		p.err = cmd.Wait()
		logf.Close()
		close(p.done)
	}()
	return p, nil
}

// Pid is the process's id (0 for a nil Process).
func (p *Process) Pid() int {
	if p == nil {
		return 0
	}
	return p.Cmd.Process.Pid
}

// DiscardStdout reads the process's stdout to its end in the background:
// a process must never block on a full pipe.
func (p *Process) DiscardStdout() { go io.Copy(io.Discard, p.Stdout) }

// StartSelf re-executes this program with envVar set to spec's JSON (the
// program's main reads it and runs as that child), and waits for the
// child's ready line, whose words after "ready" it returns.
func StartSelf(ctx context.Context, name, envVar string, spec any, logPath string) (*Process, string, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, "", fmt.Errorf("proc: finding this program to re-execute: %w", err)
	}
	js, err := json.Marshal(spec)
	if err != nil {
		return nil, "", fmt.Errorf("proc: encoding the child's spec: %w", err)
	}
	// A test binary must not run its tests in the child: -test.run
	// matches none, although the child exits before they would start.
	p, err := Start(name, self, []string{"-test.run=^$"}, []string{envVar + "=" + string(js)}, logPath)
	if err != nil {
		return nil, "", err
	}
	line := make(chan string, 1)
	go func() {
		l, _ := p.Stdout.ReadString('\n')
		line <- strings.TrimSpace(l)
		io.Copy(io.Discard, p.Stdout) // the child must never block on stdout
	}()
	select {
	case l := <-line:
		if rest, ok := strings.CutPrefix(l, "ready"); ok {
			return p, strings.TrimSpace(rest), nil
		}
		return nil, "", errors.Join(p.Failed("did not start"), p.Stop())
	case <-ctx.Done():
		return nil, "", errors.Join(fmt.Errorf("proc: starting %s: %w", name, ctx.Err()), p.Stop())
	case <-time.After(StartTimeout):
		return nil, "", errors.Join(p.Failed("was not ready within "+StartTimeout.String()), p.Stop())
	}
}

// Failed is an error saying the process failed, with its log's end.
func (p *Process) Failed(what string) error {
	b, _ := os.ReadFile(p.LogPath)
	const tail = 3000
	if len(b) > tail {
		b = b[len(b)-tail:]
	}
	return fmt.Errorf("proc: %s %s; the end of its log (%s):\n%s", p.Name, what, p.LogPath, b)
}

// Stop sends SIGTERM to the process's group, and SIGKILL if it has not
// exited within StopTimeout. Stopping a nil Process does nothing.
func (p *Process) Stop() error {
	if p == nil {
		return nil
	}
	pgid := p.Cmd.Process.Pid
	if err := syscall.Kill(-pgid, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("proc: stopping %s (process group %d): %w", p.Name, pgid, err)
	}
	select {
	case <-p.done:
		return nil
	case <-time.After(StopTimeout):
	}
	syscall.Kill(-pgid, syscall.SIGKILL)
	<-p.done
	return fmt.Errorf("proc: %s (process %d) did not stop within %s of SIGTERM: killed", p.Name, pgid, StopTimeout)
}

// WaitReady polls the server's /readyz until it answers 200, the process
// exits or StartTimeout passes since the process started.
func WaitReady(ctx context.Context, p *Process, rc *rest.Config) error {
	hc, err := rest.HTTPClientFor(rc)
	if err != nil {
		return fmt.Errorf("proc: HTTP client of %s: %w", p.Name, err)
	}
	defer hc.CloseIdleConnections()
	return PollStarting(ctx, p, 20*time.Millisecond, "to be ready", "was not ready", func() bool {
		resp, err := hc.Get(rc.Host + "/readyz")
		if err != nil {
			return false
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
}

// WaitKubeconfig waits until p has written its kubeconfig (atomically)
// at path, and reads it.
func WaitKubeconfig(ctx context.Context, p *Process, path string) (*rest.Config, error) {
	written := func() bool { _, err := os.Stat(path); return err == nil }
	if err := PollStarting(ctx, p, 10*time.Millisecond, "to write its kubeconfig", "wrote no kubeconfig", written); err != nil {
		return nil, err
	}
	rc, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		return nil, fmt.Errorf("proc: kubeconfig %s: %w", path, err)
	}
	return rc, nil
}

// PollStarting calls done every interval until it reports true, or the
// starting process p exits, ctx ends or StartTimeout passes since p
// started. waiting and late say in the errors what p was waited for ("to
// be ready") and what it failed to do ("was not ready").
func PollStarting(ctx context.Context, p *Process, every time.Duration, waiting, late string, done func() bool) error {
	for !done() {
		select {
		case <-p.done:
			return p.Failed("exited while starting")
		case <-ctx.Done():
			return fmt.Errorf("proc: waiting for %s %s: %w", p.Name, waiting, ctx.Err())
		case <-time.After(every):
		}
		if time.Since(p.Started) > StartTimeout {
			return p.Failed(late + " within " + StartTimeout.String())
		}
	}
	return nil
}

// WaitFor waits for wait to return, at most StopTimeout: the stop of
// something that is not a process of its own (a server in this process).
func WaitFor(wait func() error, what string) error {
	done := make(chan error, 1)
	go func() { done <- wait() }()
	select {
	case err := <-done:
		if err != nil {
			return fmt.Errorf("proc: stopping %s: %w", what, err)
		}
		return nil
	case <-time.After(StopTimeout):
		return fmt.Errorf("proc: %s did not stop within %s", what, StopTimeout)
	}
}
