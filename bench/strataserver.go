package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// The footprint runs strata as its users run it: the strata-server binary
// that `strata server` starts, not this program re-executed as a server
// (the cells' child). The binaries differ by kubectl and the bench's own
// code, 229 MB against 169 MB, and on this machine most of a running
// binary's text and read-only data are resident: the child's RSS was
// 23-50 MB below strata-server's on the same data (issue 18).

const strataServerPackage = "github.com/stratadev/strata/cmd/strata-server"

// strataServerBinary is prebuilt if set, or strata-server built from
// strata's module into dir.
func strataServerBinary(ctx context.Context, prebuilt, dir string, progress io.Writer) (string, error) {
	if prebuilt != "" {
		if _, err := os.Stat(prebuilt); err != nil {
			return "", fmt.Errorf("bench: strata-server binary: %w", err)
		}
		return prebuilt, nil
	}
	root, err := moduleRoot(ctx)
	if err != nil {
		return "", err
	}
	out := filepath.Join(dir, "strata-server")
	start := time.Now()
	cmd := exec.CommandContext(ctx, "go", "build", "-o", out, strataServerPackage)
	cmd.Dir = root
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("bench: go build %s (in %s): %w\n%s", strataServerPackage, root, err, b)
	}
	fmt.Fprintf(progress, "strata-server: go build took %.1fs\n", time.Since(start).Seconds())
	return out, nil
}

// startStrataServer starts bin as spec says (its data directory, its
// etcd members if apart, the bench's tokens) with the options the cells'
// child gives server.Start, and waits until it is ready.
func startStrataServer(ctx context.Context, bin string, spec childSpec, logPath string) (*process, *rest.Config, error) {
	kubeconfig := filepath.Join(spec.DataDir, "kubeconfig")
	// The server writes it anew, with this start's port, before serving.
	if err := os.Remove(kubeconfig); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, nil, fmt.Errorf("bench: removing the last start's kubeconfig: %w", err)
	}
	args := []string{"--data-dir", spec.DataDir, "--bind-address", "127.0.0.1", "--secure-port", "0",
		"--token-auth-file", spec.TokenFile, "--etcd-compaction-interval", "-1s"}
	if len(spec.EtcdServers) > 0 {
		args = append(args, "--etcd-servers", strings.Join(spec.EtcdServers, ","))
	}
	p, err := startProcess("strata-server", bin, args, nil, logPath)
	if err != nil {
		return nil, nil, err
	}
	go io.Copy(io.Discard, p.stdout) // the server must never block on stdout
	rc, err := waitKubeconfig(ctx, p, kubeconfig)
	if err == nil {
		err = waitReady(ctx, p, rc)
	}
	if err != nil {
		return nil, nil, errors.Join(err, p.stop())
	}
	return p, rc, nil
}

// waitKubeconfig waits until p has written its kubeconfig (atomically).
func waitKubeconfig(ctx context.Context, p *process, path string) (*rest.Config, error) {
	for {
		if _, err := os.Stat(path); err == nil {
			rc, err := clientcmd.BuildConfigFromFlags("", path)
			if err != nil {
				return nil, fmt.Errorf("bench: kubeconfig %s: %w", path, err)
			}
			return rc, nil
		}
		select {
		case <-p.done:
			return nil, p.failed("exited while starting")
		case <-ctx.Done():
			return nil, fmt.Errorf("bench: waiting for %s's kubeconfig: %w", p.name, ctx.Err())
		case <-time.After(10 * time.Millisecond):
		}
		if time.Since(p.started) > startTimeout {
			return nil, p.failed("wrote no kubeconfig within " + startTimeout.String())
		}
	}
}
