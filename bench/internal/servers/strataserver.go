package servers

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"k8s.io/client-go/rest"

	"github.com/stratadev/strata/bench/internal/proc"
)

// The footprint runs strata as its users run it: the strata-server binary
// that `strata server` starts, built as README builds it, not this program
// re-executed as a server (the cells' child). The binaries differ by
// kubectl and the bench's own code, and on this machine most of a running
// binary's text and read-only data are resident.

const strataServerPackage = "github.com/stratadev/strata/cmd/strata-server"

// strataServerTags are README's build tags: without them kubectl's
// kustomize links Go's plugin package, and the linker then exports every
// symbol (e2e's TestServerBinaryExportsNoGoSymbols).
const strataServerTags = "kustomize_disable_go_plugin_support"

// StrataServerBinary is prebuilt if set, or strata-server built from
// strata's module (proc.GoBinary).
func StrataServerBinary(ctx context.Context, prebuilt string, progress io.Writer) (string, error) {
	return proc.GoBinary(ctx, prebuilt, strataServerPackage, "strata-server", "-strata-server", progress, "-tags", strataServerTags)
}

// StartStrataServer starts bin as spec says (its data directory, its
// etcd members if apart, the bench's tokens), on loopback and without
// compaction as the cells' child runs, and waits until it is ready.
func StartStrataServer(ctx context.Context, bin string, spec Spec, logPath string) (*proc.Process, *rest.Config, error) {
	kubeconfig := filepath.Join(spec.DataDir, "kubeconfig")
	// The server writes it anew, with this start's port, before serving.
	if err := os.Remove(kubeconfig); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, nil, fmt.Errorf("servers: removing the last start's kubeconfig: %w", err)
	}
	args := []string{"--data-dir", spec.DataDir, "--bind-address", "127.0.0.1", "--secure-port", "0",
		"--token-auth-file", spec.TokenFile, "--etcd-compaction-interval", "-1s"}
	if len(spec.EtcdServers) > 0 {
		args = append(args, "--etcd-servers", strings.Join(spec.EtcdServers, ","))
	}
	if len(spec.Controllers) > 0 {
		args = append(args, "--controllers="+strings.Join(spec.Controllers, ","))
	}
	p, err := proc.Start("strata-server", bin, append(args, spec.Args...), nil, logPath)
	if err != nil {
		return nil, nil, err
	}
	p.DiscardStdout()
	rc, err := proc.WaitKubeconfig(ctx, p, kubeconfig)
	if err == nil {
		err = proc.WaitReady(ctx, p, rc)
	}
	if err != nil {
		return nil, nil, errors.Join(err, p.Stop())
	}
	return p, rc, nil
}
