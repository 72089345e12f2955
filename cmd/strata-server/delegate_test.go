package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestStrataDelegates checks that the strata command hands "server" and
// "kubectl" to strata-server beside it, flags and help included, and that
// without strata-server it says how to build it.
func TestStrataDelegates(t *testing.T) {
	bin := buildStrata(t)
	work := t.TempDir()
	helpStart := "Run a Kubernetes-compatible API server. With no flags it keeps everything in\n"
	for _, args := range [][]string{{"server", "--help"}, {"help", "server"}} {
		r := runBinary(t, bin, work, nil, args...)
		if r.code != 0 || !strings.HasPrefix(r.stdout, helpStart) || !strings.Contains(r.stdout, "\n  strata-server [flags]\n") ||
			!strings.Contains(r.stdout, "--data-dir string") || r.stderr != "" {
			t.Errorf("strata %v: exit %d, stdout %q, stderr %q", args, r.code, r.stdout, r.stderr)
		}
	}
	r := runBinary(t, bin, work, nil, "server", "--frobnicate")
	if r.code != 2 || r.stderr != "error: unknown flag: --frobnicate\n" || r.stdout != "" {
		t.Errorf("strata server --frobnicate: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	r = runBinary(t, bin, work, nil, "--help")
	for _, line := range []string{"  kubectl        Run kubectl against the strata server (kubectl built in)\n", "  patch ",
		"  server         Run a Kubernetes-compatible API server on an embedded (or external) etcd\n",
		"  envtest-assets Write envtest's asset directory: kube-apiserver, etcd and kubectl as links to strata-server\n"} {
		if r.code != 0 || !strings.Contains(r.stdout, line) {
			t.Errorf("strata --help: exit %d, no line %q in:\n%s", r.code, line, r.stdout)
		}
	}

	// strata alone, with nothing on $PATH.
	alone := t.TempDir()
	if err := os.WriteFile(filepath.Join(alone, "strata"), mustRead(t, bin), 0o755); err != nil {
		t.Fatal(err)
	}
	want := "error: strata-server is not installed: no strata-server in " + alone + ` (beside strata) nor on $PATH; build it beside strata with "go build -o DIR ./cmd/..." in a strata checkout (DIR holding strata), or install both with "go install github.com/stratadev/strata/cmd/...@latest"` + "\n"
	for _, args := range [][]string{{"server"}, {"kubectl", "get", "ns"}, {"help", "kubectl"}} {
		cmd := []string{"PATH=" + t.TempDir()}
		r := runBinaryEnv(t, filepath.Join(alone, "strata"), work, cmd, args...)
		if r.code != 1 || r.stderr != want || r.stdout != "" {
			t.Errorf("strata %v alone: exit %d, stdout %q, stderr %q; want 1 and %q", args, r.code, r.stdout, r.stderr, want)
		}
	}
}
