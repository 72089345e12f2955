package e2e

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/stratadev/strata/internal/freeport"
)

// Time limits of the server's life cycle.
const (
	startTimeout = 60 * time.Second // until /readyz answers 200
	stopTimeout  = 30 * time.Second // from SIGTERM to exit
)

// server is a "strata server" child process.
type server struct {
	dataDir string
	args    []string
	cmd     *exec.Cmd
	log     *syncBuffer // its stdout and stderr
	exited  chan struct{}
	waitErr error // valid once exited is closed
	stopped bool  // stop or kill was called
}

// startServer starts "strata server --data-dir dataDir" with flags
// (--secure-port 0 unless flags give a port), waits until /readyz answers
// 200 through <dataDir>/kubeconfig, and stops the server at the end of the
// test with SIGTERM, checking that it exits with status 0.
func startServer(t *testing.T, dataDir string, flags ...string) *server {
	t.Helper()
	s := launchServer(t, dataDir, flags...)
	s.waitReady(t)
	return s
}

// launchServer starts the process without waiting for it to serve.
func launchServer(t *testing.T, dataDir string, flags ...string) *server {
	t.Helper()
	needBinaries(t)
	args := append([]string{"server", "--data-dir", dataDir}, flags...)
	if !slices.ContainsFunc(flags, func(f string) bool { return f == "--secure-port" || strings.HasPrefix(f, "--secure-port=") }) {
		args = append(args, "--secure-port", "0")
	}
	s := &server{dataDir: dataDir, args: args, log: &syncBuffer{}, exited: make(chan struct{})}
	s.cmd = exec.Command(strataBin, args...)
	s.cmd.Dir = t.TempDir()
	s.cmd.Stdout, s.cmd.Stderr = s.log, s.log
	if err := s.cmd.Start(); err != nil {
		t.Fatalf("starting strata %v: %v", args, err)
	}
	go func() {
		s.waitErr = s.cmd.Wait()
		close(s.exited)
	}()
	t.Cleanup(func() {
		if !s.stopped {
			s.stop(t)
		}
		if t.Failed() {
			t.Logf("log of strata %v:\n%s", s.args, s.log.String())
		}
	})
	return s
}

func (s *server) kubeconfig() string { return filepath.Join(s.dataDir, "kubeconfig") }
func (s *server) pkiDir() string     { return filepath.Join(s.dataDir, "pki") }

// waitReady waits until /readyz, reached through the kubeconfig in the
// data directory, answers 200. A kubeconfig left by an earlier server on
// another port does not count: nothing answers there.
func (s *server) waitReady(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(startTimeout)
	var last error
	for {
		select {
		case <-s.exited:
			s.stopped = true
			t.Fatalf("strata %v exited before it was ready: %v\n%s", s.args, s.waitErr, s.log.String())
		default:
		}
		if last = s.readyz(); last == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("strata %v not ready after %v: %v", s.args, startTimeout, last)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (s *server) readyz() error {
	if _, err := os.Stat(s.kubeconfig()); err != nil {
		return err
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", s.kubeconfig())
	if err != nil {
		return err
	}
	client, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return err
	}
	client.Timeout = 2 * time.Second
	resp, err := client.Get(cfg.Host + "/readyz")
	if err != nil {
		return err
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("/readyz: %s: %s", resp.Status, body)
	}
	return nil
}

// restConfig is the client configuration in the server's kubeconfig.
func (s *server) restConfig(t *testing.T) *rest.Config {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", s.kubeconfig())
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// stop sends SIGTERM and checks that the server exits with status 0 within
// stopTimeout.
func (s *server) stop(t *testing.T) {
	t.Helper()
	s.stopped = true
	select {
	case <-s.exited:
		t.Errorf("strata %v had already exited: %v", s.args, s.waitErr)
		return
	default:
	}
	start := time.Now()
	defer func() {
		if d := time.Since(start); d > 5*time.Second {
			t.Logf("strata took %v to stop after SIGTERM", d.Round(time.Millisecond))
		}
	}()
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Errorf("SIGTERM: %v", err)
	}
	select {
	case <-s.exited:
	case <-time.After(stopTimeout):
		s.cmd.Process.Kill()
		<-s.exited
		t.Errorf("strata %v still running %v after SIGTERM; killed", s.args, stopTimeout)
		return
	}
	if s.waitErr != nil {
		t.Errorf("strata %v after SIGTERM: %v, want exit status 0", s.args, s.waitErr)
	}
}

// kill sends SIGKILL and waits for the process to end.
func (s *server) kill(t *testing.T) {
	t.Helper()
	s.stopped = true
	if err := s.cmd.Process.Kill(); err != nil {
		t.Errorf("SIGKILL: %v", err)
	}
	<-s.exited
}

// waitExit waits for a server expected to end by itself (a refused start)
// and returns its exit status.
func (s *server) waitExit(t *testing.T, timeout time.Duration) int {
	t.Helper()
	select {
	case <-s.exited:
	case <-time.After(timeout):
		s.kill(t)
		t.Fatalf("strata %v still running after %v, want it to refuse to start", s.args, timeout)
	}
	s.stopped = true
	var exitErr *exec.ExitError
	switch {
	case s.waitErr == nil:
		return 0
	case errors.As(s.waitErr, &exitErr):
		return exitErr.ExitCode()
	}
	t.Fatalf("strata %v: %v", s.args, s.waitErr)
	return -1
}

// freePort returns a TCP port on 127.0.0.1 that nothing listened on a
// moment ago, for tests that need to know the port before the start; it is
// below the ephemeral range, so no outgoing connection takes it meanwhile.
func freePort(t *testing.T) int {
	t.Helper()
	ports, err := freeport.Loopback(1)
	if err != nil {
		t.Fatal(err)
	}
	return ports[0]
}

// syncBuffer is a bytes.Buffer safe for one writer and concurrent readers.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// portFlag is --secure-port for a fixed port.
func portFlag(port int) []string { return []string{"--secure-port", strconv.Itoa(port)} }
