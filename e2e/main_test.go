package e2e

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// strataTags are the build tags of README's build: without Go plugins in
// kubectl's kustomize, whose loader would make the linker export every
// symbol of strata-server (binary_test.go).
const strataTags = "kustomize_disable_go_plugin_support"

// The binaries under test, built once per test binary by TestMain; empty
// with -short.
var (
	strataBin  string // go build -tags strataTags -o DIR ./cmd/..., as the README says: strata, and strata-server beside it
	kubectlBin string // kubectl of k8s.io/kubernetes, version set as its release does
	// kubeVersion is the k8s.io/kubernetes version in go.mod (v1.37.2): the
	// release of the separate kubectl and the server version strata reports.
	kubeVersion string
)

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		os.Exit(m.Run()) // every test skips itself
	}
	dir, err := os.MkdirTemp("", "strata-e2e-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		os.Exit(1)
	}
	if err := buildBinaries(dir); err != nil {
		os.RemoveAll(dir)
		fmt.Fprintln(os.Stderr, "e2e:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// needBinaries skips a test when TestMain built nothing (-short).
func needBinaries(t testing.TB) {
	t.Helper()
	if strataBin == "" {
		t.Skip("-short: the strata and kubectl binaries are not built")
	}
}

// buildBinaries builds strata, strata-server and kubectl into dir, at once.
func buildBinaries(dir string) error {
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	kubeVersion, err = goOutput(root, "list", "-m", "-f", "{{.Version}}", "k8s.io/kubernetes")
	if err != nil {
		return err
	}
	major, minor, ok := parseMajorMinor(kubeVersion)
	if !ok {
		return fmt.Errorf("k8s.io/kubernetes %s: want vMAJOR.MINOR.PATCH", kubeVersion)
	}
	// kubectl takes its version from variables only the linker sets; its
	// release builds set them so (k8s.io/kubernetes hack/lib/version.sh).
	const v = "k8s.io/component-base/version."
	ldflags := fmt.Sprintf("-X %sgitVersion=%s -X %sgitMajor=%s -X %sgitMinor=%s", v, kubeVersion, v, major, v, minor)

	strata, kubectl := filepath.Join(dir, "strata"), filepath.Join(dir, "kubectl")
	builds := [][]string{
		// strata runs "server" and "kubectl" by strata-server beside it.
		{"build", "-tags", strataTags, "-o", dir + string(filepath.Separator), "./cmd/strata", "./cmd/strata-server"},
		{"build", "-ldflags", ldflags, "-o", kubectl, "k8s.io/kubernetes/cmd/kubectl"},
	}
	errs := make([]error, len(builds))
	var wg sync.WaitGroup
	for i, args := range builds {
		wg.Go(func() { _, errs[i] = goOutput(root, args...) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	strataBin, kubectlBin = strata, kubectl
	return nil
}

// moduleRoot is the directory of the go.mod the e2e package belongs to.
func moduleRoot() (string, error) {
	gomod, err := goOutput(".", "env", "GOMOD")
	if err != nil {
		return "", err
	}
	if gomod == "" || gomod == os.DevNull {
		return "", fmt.Errorf("go env GOMOD: not inside a module")
	}
	return filepath.Dir(gomod), nil
}

// goOutput runs the go command in dir and returns its trimmed output.
func goOutput(dir string, args ...string) (string, error) {
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("go %s (in %s): %v\n%s", strings.Join(args, " "), dir, err, stderr.String())
	}
	return strings.TrimSpace(stdout.String()), nil
}

// parseMajorMinor splits "v1.37.2" into "1" and "37".
func parseMajorMinor(version string) (major, minor string, ok bool) {
	parts := strings.Split(strings.TrimPrefix(version, "v"), ".")
	if len(parts) != 3 || !strings.HasPrefix(version, "v") {
		return "", "", false
	}
	return parts[0], parts[1], true
}
