package main

import (
	"bytes"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"strings"
	"sync"
	"testing"

	utilversion "k8s.io/apimachinery/pkg/util/version"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/client-go/rest"
	kubeversion "k8s.io/component-base/version"

	"github.com/stratadev/strata/apiserver/authn"
	"github.com/stratadev/strata/internal/pki"
)

func TestDefaultKubeconfig(t *testing.T) {
	tests := []struct {
		name string
		args []string
		env  map[string]string
		want string // "" when kubectl's own choice stands
	}{
		{name: "nothing set", args: []string{"get", "ns"}, want: "strata-data/kubeconfig"},
		{name: "data dir", args: []string{"get", "ns"}, env: map[string]string{"STRATA_DATA_DIR": "/var/lib/strata"}, want: "/var/lib/strata/kubeconfig"},
		{name: "KUBECONFIG", args: []string{"get", "ns"}, env: map[string]string{"KUBECONFIG": "/k", "STRATA_DATA_DIR": "/d"}},
		{name: "empty KUBECONFIG", args: []string{"get", "ns"}, env: map[string]string{"KUBECONFIG": ""}, want: "strata-data/kubeconfig"},
		{name: "--kubeconfig PATH", args: []string{"--kubeconfig", "/k", "get", "ns"}},
		{name: "--kubeconfig=PATH", args: []string{"get", "ns", "--kubeconfig=/k"}},
		{name: "--kubeconfig after --", args: []string{"exec", "pod", "--", "tool", "--kubeconfig", "/k"}, want: "strata-data/kubeconfig"},
		{name: "--kubeconfigs is another flag", args: []string{"get", "--kubeconfigs=x"}, want: "strata-data/kubeconfig"},
		{name: "no arguments", want: "strata-data/kubeconfig"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := defaultKubeconfig(tt.args, func(k string) string { return tt.env[k] })
			if ok != (tt.want != "") || got != filepath.FromSlash(tt.want) {
				t.Errorf("got %q, %v; want %q", got, ok, tt.want)
			}
		})
	}
}

// TestKubectlVersion checks, in the test binary that no -ldflags
// versioned, that kubectl's version (component-base's, which "kubectl
// version" prints) and its user agent (client-go's) become the embedded
// kubectl's release.
func TestKubectlVersion(t *testing.T) {
	want := kubectlVersion(t)
	versionKubectl()
	if got := kubeversion.Get(); got.GitVersion != want || got.Major != "1" || got.Minor != strings.Split(want, ".")[1] {
		t.Errorf("component-base version %+v, want %s", got, want)
	}
	if _, err := utilversion.ParseSemantic(kubeversion.Get().GitVersion); err != nil {
		t.Error(err)
	}
	ua := rest.DefaultKubernetesUserAgent()
	if !strings.Contains(ua, "/"+want+" (") || !strings.HasSuffix(ua, ") kubernetes/unknown") {
		t.Errorf("user agent %q, want <program>/%s (os/arch) kubernetes/unknown", ua, want)
	}
}

// kubectlVersion is the kubectl release whose code k8s.io/kubectl v0.X.Y
// holds: v1.X.Y, read from the build information of the test binary.
func kubectlVersion(t *testing.T) string {
	t.Helper()
	info, ok := debug.ReadBuildInfo()
	if !ok {
		t.Fatal("no build information")
	}
	for _, dep := range info.Deps {
		if dep.Path != "k8s.io/kubectl" {
			continue
		}
		v := dep.Version
		if dep.Replace != nil {
			v = dep.Replace.Version
		}
		if !strings.HasPrefix(v, "v0.") {
			t.Fatalf("k8s.io/kubectl %s: want v0.X.Y", v)
		}
		return "v1." + strings.TrimPrefix(v, "v0.")
	}
	t.Fatal("k8s.io/kubectl is not a dependency")
	return ""
}

// built holds the strata and strata-server binaries buildStrata builds, once
// per test binary.
var built struct {
	once sync.Once
	dir  string
	err  error
}

// buildStrata builds strata and strata-server into one directory, as README
// says, with kubectl's version set by the linker as the help of strata
// kubectl says release builds do, and returns the path of strata: its
// server and kubectl commands run strata-server beside it.
func buildStrata(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the strata binaries")
	}
	built.once.Do(func() {
		built.dir, built.err = os.MkdirTemp("", "strata-server-test-")
		if built.err != nil {
			return
		}
		// README's build (its build tag; no -ldflags, so the version
		// kubectl reports is the one strata gives it).
		cmd := exec.Command("go", "build", "-tags", "kustomize_disable_go_plugin_support",
			"-o", built.dir+string(filepath.Separator), "./cmd/strata", "./cmd/strata-server")
		cmd.Dir = filepath.Join("..", "..")
		if out, err := cmd.CombinedOutput(); err != nil {
			built.err = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if built.err != nil {
		t.Fatal(built.err)
	}
	return filepath.Join(built.dir, "strata")
}

func TestMain(m *testing.M) {
	code := m.Run()
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
	os.Exit(code)
}

type kubectlRun struct {
	code           int
	stdout, stderr string
}

// runBinary runs bin with args in dir, with only PATH from the test's
// environment, HOME in a temporary directory (kubectl's cache) and env.
func runBinary(t *testing.T, bin, dir string, env []string, args ...string) kubectlRun {
	t.Helper()
	return runBinaryEnv(t, bin, dir, append([]string{"PATH=" + os.Getenv("PATH")}, env...), args...)
}

// runBinaryEnv is runBinary with PATH, if any, from env.
func runBinaryEnv(t *testing.T, bin, dir string, env []string, args ...string) kubectlRun {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = append([]string{"HOME=" + t.TempDir()}, env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exitErr *exec.ExitError
	code := 0
	if errors.As(err, &exitErr) {
		code = exitErr.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return kubectlRun{code, stdout.String(), stderr.String()}
}

// Answers of a minimal API server: discovery of namespaces, and a list.
var fakeAPI = map[string]string{
	"/api":                `{"kind":"APIVersions","versions":["v1"],"serverAddressByClientCIDRs":[{"clientCIDR":"0.0.0.0/0","serverAddress":"127.0.0.1"}]}`,
	"/apis":               `{"kind":"APIGroupList","apiVersion":"v1","groups":[]}`,
	"/api/v1":             `{"kind":"APIResourceList","groupVersion":"v1","resources":[{"name":"namespaces","singularName":"namespace","namespaced":false,"kind":"Namespace","verbs":["get","list"],"shortNames":["ns"]}]}`,
	"/api/v1/namespaces":  `{"kind":"NamespaceList","apiVersion":"v1","metadata":{"resourceVersion":"7"},"items":[{"metadata":{"name":"default","creationTimestamp":"2026-01-01T00:00:00Z"},"status":{"phase":"Active"}},{"metadata":{"name":"kube-system","creationTimestamp":"2026-01-01T00:00:00Z"},"status":{"phase":"Active"}}]}`,
	"/version":            `{"major":"1","minor":"37","gitVersion":"v1.37.2","platform":"linux/amd64"}`,
	"/api/v1/namespaces/": "",
}

// startFakeAPIServer serves fakeAPI over TLS with the credentials package
// pki makes in dataDir, behind authn's middleware, and writes
// dataDir/kubeconfig as strata server does.
func startFakeAPIServer(t *testing.T, dataDir string) string {
	t.Helper()
	serving, err := pki.EnsureServing(dataDir, []string{"127.0.0.1", "localhost"})
	if err != nil {
		t.Fatal(err)
	}
	token, err := pki.EnsureToken(dataDir)
	if err != nil {
		t.Fatal(err)
	}
	pair, err := tls.LoadX509KeyPair(serving.CertFile, serving.KeyFile)
	if err != nil {
		t.Fatal(err)
	}
	api := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, ok := fakeAPI[r.URL.Path]
		if !ok || body == "" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			io.WriteString(w, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"not found","reason":"NotFound","code":404}`)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, body)
	})
	a := &authn.Authenticator{Tokens: map[string]user.Info{token: &user.DefaultInfo{Name: "strata-admin", Groups: []string{"system:masters"}}}}
	srv := httptest.NewUnstartedServer(authn.Middleware(a, api))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{pair}}
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.StartTLS()
	t.Cleanup(srv.Close)
	if err := pki.WriteKubeconfig(filepath.Join(dataDir, "kubeconfig"), srv.URL, serving.CAPEM, token); err != nil {
		t.Fatal(err)
	}
	return srv.URL
}

func TestKubectl(t *testing.T) {
	version := kubectlVersion(t)
	bin := buildStrata(t)
	dataDir := t.TempDir()
	serverURL := startFakeAPIServer(t, dataDir)
	withDataDir := []string{"STRATA_DATA_DIR=" + dataDir}
	work := t.TempDir() // a working directory without strata-data

	t.Run("version --client", func(t *testing.T) {
		r := runBinary(t, bin, work, nil, "kubectl", "version", "--client", "-o", "json")
		var got struct {
			ClientVersion *struct{ GitVersion, Major, Minor string }
		}
		if err := json.Unmarshal([]byte(r.stdout), &got); r.code != 0 || err != nil || got.ClientVersion == nil {
			t.Fatalf("exit %d, %v: stdout %q stderr %q", r.code, err, r.stdout, r.stderr)
		}
		if got.ClientVersion.GitVersion != version || got.ClientVersion.Major != "1" {
			t.Errorf("clientVersion %+v, want gitVersion %s", *got.ClientVersion, version)
		}
	})
	t.Run("help names the version", func(t *testing.T) {
		r := runBinary(t, bin, work, nil, "help", "kubectl")
		if r.code != 0 || !strings.Contains(r.stdout, "kubectl "+version) || !strings.Contains(r.stdout, `"strata kubectl version" says `+version) {
			t.Errorf("exit %d: strata help kubectl does not name kubectl %s:\n%s", r.code, version, r.stdout)
		}
	})
	t.Run("--help is kubectl's", func(t *testing.T) {
		r := runBinary(t, bin, work, nil, "kubectl", "--help")
		if r.code != 0 || !strings.HasPrefix(r.stdout, "kubectl controls the Kubernetes cluster manager.") || !strings.Contains(r.stdout, "Use \"kubectl <command> --help\"") {
			t.Errorf("exit %d: stdout %q", r.code, r.stdout)
		}
	})
	t.Run("get ns through the defaulted kubeconfig", func(t *testing.T) {
		r := runBinary(t, bin, work, withDataDir, "kubectl", "get", "ns")
		lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
		if r.code != 0 || len(lines) != 3 || !regexp.MustCompile(`^NAME\s+AGE$`).MatchString(lines[0]) ||
			!strings.HasPrefix(lines[1], "default ") || !strings.HasPrefix(lines[2], "kube-system ") {
			t.Errorf("exit %d: stdout %q stderr %q", r.code, r.stdout, r.stderr)
		}
	})
	t.Run("get ns -o name", func(t *testing.T) {
		r := runBinary(t, bin, work, withDataDir, "kubectl", "get", "namespaces", "-o", "name")
		if r.code != 0 || r.stdout != "namespace/default\nnamespace/kube-system\n" {
			t.Errorf("exit %d: stdout %q stderr %q", r.code, r.stdout, r.stderr)
		}
	})
	t.Run("data dir in the working directory", func(t *testing.T) {
		cwd := t.TempDir()
		if err := os.CopyFS(filepath.Join(cwd, "strata-data"), os.DirFS(dataDir)); err != nil {
			t.Fatal(err)
		}
		r := runBinary(t, bin, cwd, nil, "kubectl", "config", "view", "-o", "jsonpath={.clusters[0].cluster.server}")
		if r.code != 0 || r.stdout != serverURL {
			t.Errorf("exit %d: stdout %q, want %q; stderr %q", r.code, r.stdout, serverURL, r.stderr)
		}
	})
	t.Run("KUBECONFIG wins over the data dir", func(t *testing.T) {
		other := filepath.Join(t.TempDir(), "other")
		if err := pki.WriteKubeconfig(other, "https://other.example:6443", mustRead(t, filepath.Join(dataDir, "ca.crt")), "t"); err != nil {
			t.Fatal(err)
		}
		for _, env := range [][]string{{"KUBECONFIG=" + other}, {"STRATA_DATA_DIR=" + dataDir, "KUBECONFIG=" + other}} {
			r := runBinary(t, bin, work, env, "kubectl", "config", "view", "-o", "jsonpath={.clusters[0].cluster.server}")
			if r.code != 0 || r.stdout != "https://other.example:6443" {
				t.Errorf("env %v: exit %d, stdout %q, stderr %q", env, r.code, r.stdout, r.stderr)
			}
		}
		r := runBinary(t, bin, work, withDataDir, "kubectl", "--kubeconfig", other, "config", "view", "-o", "jsonpath={.clusters[0].cluster.server}")
		if r.code != 0 || r.stdout != "https://other.example:6443" {
			t.Errorf("--kubeconfig: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
		}
	})

	// kubectl's errors: its message on stderr, its exit status.
	errorCases := []struct {
		name   string
		env    []string
		args   []string
		stderr string // the whole of stderr, or its last line when klog logged before it
	}{
		{name: "unknown resource type", env: withDataDir, args: []string{"get", "widgets"}, stderr: `error: the server doesn't have a resource type "widgets"` + "\n"},
		{name: "not found", env: withDataDir, args: []string{"get", "ns", "nope"}, stderr: `Error from server (NotFound): not found` + "\n"},
		{name: "unknown command", args: []string{"frobnicate"}, stderr: `error: unknown command "frobnicate" for "kubectl"` + "\n"},
		{name: "unknown flag", args: []string{"--frobnicate"}, stderr: "error: unknown flag: --frobnicate\nSee 'kubectl --help' for usage.\n"},
		{name: "wrong token", env: []string{"STRATA_DATA_DIR=" + dataDir}, args: []string{"get", "ns", "--token", "wrong"}, stderr: "error: You must be logged in to the server (the server has asked for the client to provide credentials)\n"},
	}
	for _, tt := range errorCases {
		t.Run(tt.name, func(t *testing.T) {
			r := runBinary(t, bin, work, tt.env, append([]string{"kubectl"}, tt.args...)...)
			lastLine := r.stderr[strings.LastIndex(strings.TrimSuffix(r.stderr, "\n"), "\n")+1:]
			if r.code != 1 || (r.stderr != tt.stderr && lastLine != tt.stderr) || r.stdout != "" {
				t.Errorf("exit %d, stdout %q, stderr %q; want 1 and stderr %q", r.code, r.stdout, r.stderr, tt.stderr)
			}
		})
	}
}

func mustRead(t *testing.T, file string) []byte {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
