package proc

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"time"
)

// GoBinary returns the binary of pkg to run: prebuilt when given (flag is
// the option that gives it), else pkg built from strata's module, whose
// requirements pin its version, into the user's cache directory as name
// (go build relinks only when something changed, so a warm build costs
// seconds). buildFlags go to go build before the package.
func GoBinary(ctx context.Context, prebuilt, pkg, name, flag string, progress io.Writer, buildFlags ...string) (string, error) {
	if prebuilt != "" {
		if _, err := os.Stat(prebuilt); err != nil {
			return "", fmt.Errorf("proc: %s binary: %w", path.Base(pkg), err)
		}
		return prebuilt, nil
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("proc: cache directory for %s: %w", path.Base(pkg), err)
	}
	out := filepath.Join(cache, "strata-bench", name)
	root, err := moduleRoot(ctx, pkg, flag)
	if err != nil {
		return "", err
	}
	start := time.Now()
	args := append(append([]string{"build"}, buildFlags...), "-o", out, pkg)
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = root
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("proc: go %s (in %s): %w\n%s", strings.Join(args, " "), root, err, b)
	}
	fmt.Fprintf(progress, "%s: go build took %.1fs\n", name, time.Since(start).Seconds())
	return out, nil
}

// moduleRoot is the directory of strata's go.mod, found from the working
// directory: go build of pkg needs its requirements.
func moduleRoot(ctx context.Context, pkg, flag string) (string, error) {
	dir, err := ModuleRoot(ctx)
	if err != nil {
		return "", fmt.Errorf("proc: building %s: %w; or pass a prebuilt binary (%s)", path.Base(pkg), err, flag)
	}
	return dir, nil
}

// ModuleRoot is the directory of strata's go.mod, which must be the
// working directory's module.
func ModuleRoot(ctx context.Context) (string, error) {
	b, err := exec.CommandContext(ctx, "go", "list", "-m", "-f", "{{.Path}} {{.Dir}}").Output()
	modPath, dir, _ := strings.Cut(strings.TrimSpace(string(b)), " ")
	if err != nil || modPath != "github.com/stratadev/strata" {
		return "", fmt.Errorf("strata's module must be the working directory's (go list -m: %q, %v)", b, err)
	}
	return dir, nil
}

// FreePort is a loopback TCP port free a moment ago, for a server that
// does not report the port it picks for 0 (kube-apiserver).
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("proc: finding a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
