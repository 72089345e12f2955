package e2e

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// kubectlTimeout bounds one kubectl command.
const kubectlTimeout = 60 * time.Second

// kubectl runs one of the two kubectls against a server.
type kubectl struct {
	name string   // "strata-kubectl" or "kubectl"
	argv []string // the binary, and "kubectl" for strata's
	env  []string
	dir  string // working directory (no strata-data in it)
}

// kubectlKind makes a kubectl that reaches the server of a data directory.
type kubectlKind struct {
	name string
	new  func(t *testing.T, dataDir string) *kubectl
}

// kubectls are the clients every kubectl scenario runs with: the kubectl
// built into strata, finding the kubeconfig through STRATA_DATA_DIR, and
// kubectl itself through KUBECONFIG.
var kubectls = []kubectlKind{
	{"strata-kubectl", strataKubectl},
	{"kubectl", plainKubectl},
}

// strataKubectl is "strata kubectl" with STRATA_DATA_DIR=dataDir and no
// KUBECONFIG.
func strataKubectl(t *testing.T, dataDir string) *kubectl {
	t.Helper()
	needBinaries(t)
	return &kubectl{name: "strata-kubectl", argv: []string{strataBin, "kubectl"},
		env: kubectlEnv(t, "STRATA_DATA_DIR="+dataDir), dir: t.TempDir()}
}

// plainKubectl is kubectl with KUBECONFIG=<dataDir>/kubeconfig.
func plainKubectl(t *testing.T, dataDir string) *kubectl {
	t.Helper()
	return kubectlWithConfig(t, filepath.Join(dataDir, "kubeconfig"))
}

// kubectlWithConfig is kubectl with KUBECONFIG=kubeconfig.
func kubectlWithConfig(t *testing.T, kubeconfig string) *kubectl {
	t.Helper()
	needBinaries(t)
	return &kubectl{name: "kubectl", argv: []string{kubectlBin},
		env: kubectlEnv(t, "KUBECONFIG="+kubeconfig), dir: t.TempDir()}
}

// kubectlEnv is the test's environment without anything that would choose
// a kubeconfig or share kubectl's caches and kuberc with the user, plus
// extra.
func kubectlEnv(t *testing.T, extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch name {
		case "KUBECONFIG", "STRATA_DATA_DIR", "HOME", "KUBECACHEDIR", "KUBERC", "KUBECTL_KUBERC":
			continue
		}
		env = append(env, kv)
	}
	return append(append(env, "HOME="+t.TempDir()), extra...)
}

// result is what a kubectl command did.
type result struct {
	args           []string
	stdout, stderr string
	code           int
}

func (r result) String() string {
	return "kubectl " + strings.Join(r.args, " ") + ": exit " + strconv.Itoa(r.code) +
		"\nstdout:\n" + r.stdout + "\nstderr:\n" + r.stderr
}

// run runs kubectl with args and returns its output and exit status.
func (k *kubectl) run(t *testing.T, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), kubectlTimeout)
	defer cancel()
	cmd := k.command(ctx, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	r := result{args: args, stdout: stdout.String(), stderr: stderr.String()}
	var exitErr *exec.ExitError
	switch {
	case ctx.Err() != nil:
		t.Fatalf("%s %v: no end after %v\nstdout:\n%s\nstderr:\n%s", k.name, args, kubectlTimeout, r.stdout, r.stderr)
	case errors.As(err, &exitErr):
		r.code = exitErr.ExitCode()
	case err != nil:
		t.Fatalf("%s %v: %v", k.name, args, err)
	}
	return r
}

func (k *kubectl) command(ctx context.Context, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, k.argv[0], append(k.argv[1:len(k.argv):len(k.argv)], args...)...)
	cmd.Env = k.env
	cmd.Dir = k.dir
	return cmd
}

// ok runs kubectl, requires exit status 0 and nothing on stderr, and
// returns stdout.
func (k *kubectl) ok(t *testing.T, args ...string) string {
	t.Helper()
	r := k.run(t, args...)
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("%s: want exit 0 and no stderr\n%v", k.name, r)
	}
	return r.stdout
}

// exact runs kubectl and requires exit status 0, stdout want and nothing
// on stderr.
func (k *kubectl) exact(t *testing.T, want string, args ...string) {
	t.Helper()
	r := k.run(t, args...)
	if r.code != 0 || r.stdout != want || r.stderr != "" {
		t.Fatalf("%s: want exit 0, stdout %q, no stderr\n%v", k.name, want, r)
	}
}

// stream is a long-running kubectl (get -w) whose stdout is read line by
// line.
type stream struct {
	cmd    *exec.Cmd
	cancel context.CancelFunc
	lines  chan string
	stderr *syncBuffer
	seen   []string
}

// start runs kubectl with args in the background; it is killed at the end
// of the test unless stopped before.
func (k *kubectl) start(t *testing.T, args ...string) *stream {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), kubectlTimeout)
	cmd := k.command(ctx, args...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	s := &stream{cmd: cmd, cancel: cancel, lines: make(chan string, 100), stderr: &syncBuffer{}}
	cmd.Stderr = s.stderr
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatalf("%s %v: %v", k.name, args, err)
	}
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			s.lines <- sc.Text()
		}
		io.Copy(io.Discard, stdout)
		close(s.lines)
	}()
	t.Cleanup(s.stop)
	return s
}

// next returns the next line that matches, failing the test when the
// output ends or timeout passes first.
func (s *stream) next(t *testing.T, timeout time.Duration, what string, match func(fields []string) bool) []string {
	t.Helper()
	deadline := time.After(timeout)
	for {
		select {
		case line, ok := <-s.lines:
			if !ok {
				t.Fatalf("output ended before %s; lines so far:\n%s\nstderr:\n%s", what, strings.Join(s.seen, "\n"), s.stderr.String())
			}
			s.seen = append(s.seen, line)
			if f := strings.Fields(line); match(f) {
				return f
			}
		case <-deadline:
			t.Fatalf("no %s within %v; lines so far:\n%s\nstderr:\n%s", what, timeout, strings.Join(s.seen, "\n"), s.stderr.String())
		}
	}
}

// stop kills the process and waits for it.
func (s *stream) stop() {
	s.cancel()
	s.cmd.Wait()
}

// table splits kubectl's table output into rows of fields.
func table(out string) [][]string {
	var rows [][]string
	for line := range strings.Lines(out) {
		if f := strings.Fields(line); len(f) > 0 {
			rows = append(rows, f)
		}
	}
	return rows
}
