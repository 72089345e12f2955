package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stratadev/strata/internal/cli"
	"github.com/stratadev/strata/server"
)

// parseKubeAPIServer parses args as kube-apiserver's and checks them as
// its RunE does first, returning the warnings.
func parseKubeAPIServer(t *testing.T, env map[string]string, args ...string) (string, []string, error) {
	t.Helper()
	cmd := newKubeAPIServerCommand(func(k string) string { return env[k] })
	var stderr bytes.Buffer
	if err := cmd.ParseFlags(args); err != nil {
		return "", nil, cmd.FlagErrorFunc()(cmd, err)
	}
	err := checkKubeAPIServerFlags(cmd.Flags(), &stderr)
	controllers, _ := cmd.Flags().GetStringSlice("controllers")
	return stderr.String(), controllers, err
}

// The flags controller-runtime v0.25's envtest gives kube-apiserver
// (controlplane.APIServer.defaultArgs, its minimal defaults and CertAuthn)
// are taken without a word.
func TestKubeAPIServerTakesEnvtestsFlags(t *testing.T) {
	dir := t.TempDir()
	envtestArgs := []string{
		"--service-cluster-ip-range=10.0.0.0/24", "--allow-privileged=true", "--disable-admission-plugins=ServiceAccount",
		"--cert-dir=" + dir, "--authorization-mode=RBAC", "--secure-port=40001", "--bind-address=127.0.0.1",
		"--service-account-issuer=https://127.0.0.1:40001/", "--service-account-key-file=" + filepath.Join(dir, "sa-signer.crt"),
		"--service-account-signing-key-file=" + filepath.Join(dir, "sa-signer.key"), "--etcd-servers=http://127.0.0.1:40002",
		"--client-ca-file=" + filepath.Join(dir, "client-cert-auth-ca.crt"),
	}
	warnings, controllers, err := parseKubeAPIServer(t, nil, envtestArgs...)
	if err != nil || warnings != "" {
		t.Fatalf("envtest's flags: error %v, warnings %q", err, warnings)
	}
	if len(controllers) != 0 {
		t.Errorf("controllers by default: %q, want none (kube-apiserver runs none)", controllers)
	}
}

func TestKubeAPIServerFlags(t *testing.T) {
	tests := []struct {
		name        string
		env         map[string]string
		args        []string
		warnings    string
		controllers []string
		err         string
		usage       bool
	}{
		{name: "accepted at the value strata behaves as", args: []string{"--insecure-port=0", "--etcd-prefix=/registry", "--storage-backend=etcd3"}},
		{name: "bool given without a value", args: []string{"--logtostderr", "--v=4"},
			warnings: "warning: kube-apiserver flag --v=4 is ignored: it cannot change what strata's clients see\n" +
				"warning: kube-apiserver flag --logtostderr=true is ignored: it cannot change what strata's clients see\n"},
		{name: "refused", args: []string{"--feature-gates=Foo=true"}, usage: true,
			err: "--feature-gates=Foo=true: refused: strata serves Kubernetes v1.37's default feature gates only"},
		{name: "refused at another value", args: []string{"--etcd-prefix=/other"}, usage: true,
			err: "--etcd-prefix=/other: refused: strata keeps objects under etcd's /registry prefix only"},
		{name: "unknown", args: []string{"--frobnicate=1"}, usage: true,
			err: "unknown flag: --frobnicate (strata's kube-apiserver does not offer it: docs/testing.md lists the flags it takes)"},
		{name: "controllers from the environment", env: map[string]string{controllersEnv: "garbage-collector-controller,namespace-controller"},
			controllers: []string{"garbage-collector-controller", "namespace-controller"}},
		{name: "controllers by flag", args: []string{"--controllers=*"}, controllers: []string{"*"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			warnings, controllers, err := parseKubeAPIServer(t, tt.env, tt.args...)
			if got := errString(err); got != tt.err {
				t.Fatalf("error %q, want %q", got, tt.err)
			}
			if err != nil && errors.As(err, &cli.UsageError{}) != tt.usage {
				t.Errorf("error %v: a usage error? %v, want %v", err, !tt.usage, tt.usage)
			}
			if err != nil {
				return
			}
			if warnings != tt.warnings {
				t.Errorf("warnings %q, want %q", warnings, tt.warnings)
			}
			if len(controllers) != len(tt.controllers) || !slices.Equal(controllers, tt.controllers) {
				t.Errorf("controllers %q, want %q", controllers, tt.controllers)
			}
		})
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// envtest learns from --help whether kube-apiserver still has
// --insecure-port (a line starting with the flag): it must not, or envtest
// passes --insecure-port, which kube-apiserver has refused since v1.24.
// The flags envtest reads are listed.
func TestKubeAPIServerHelp(t *testing.T) {
	cmd := newKubeAPIServerCommand(func(string) string { return "" })
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetArgs([]string{"--help"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(out.String(), "\n")
	has := func(flag string) bool {
		return slices.ContainsFunc(lines, func(l string) bool { return strings.HasPrefix(strings.TrimSpace(l), "--"+flag+" ") })
	}
	if has("insecure-port") {
		t.Error("--help lists --insecure-port")
	}
	for _, flag := range []string{"cert-dir", "client-ca-file", "etcd-servers", "allow-privileged", "controllers"} {
		if !has(flag) {
			t.Errorf("--help does not list --%s", flag)
		}
	}
}

func TestUseCertDir(t *testing.T) {
	dir := t.TempDir()
	o := server.NewOptions()
	cleanup, err := useCertDir(o, dir, false)
	if err != nil {
		t.Fatal(err)
	}
	cleanup()
	if o.DataDir != dir || o.TLSCertFile != "" {
		t.Errorf("without apiserver.crt: data dir %q, cert %q; want %q and the generated certificate", o.DataDir, o.TLSCertFile, dir)
	}
	for _, f := range []string{certDirCert, certDirKey} {
		if err := os.WriteFile(filepath.Join(dir, f), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	o = server.NewOptions()
	o.DataDir = "given"
	if _, err := useCertDir(o, dir, true); err != nil {
		t.Fatal(err)
	}
	if o.DataDir != "given" || o.TLSCertFile != filepath.Join(dir, certDirCert) || o.TLSPrivateKeyFile != filepath.Join(dir, certDirKey) {
		t.Errorf("with --data-dir, apiserver.crt and .key: data dir %q, serving %q, %q", o.DataDir, o.TLSCertFile, o.TLSPrivateKeyFile)
	}
	o = server.NewOptions()
	cleanup, err = useCertDir(o, "", false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(o.DataDir); err != nil || o.TLSCertFile != "" {
		t.Fatalf("temporary directory: %v; serving %q", err, o.TLSCertFile)
	}
	cleanup()
	if _, err := os.Stat(o.DataDir); !os.IsNotExist(err) {
		t.Errorf("temporary directory %s after the cleanup: %v, want it gone", o.DataDir, err)
	}
}

func TestEtcdArgs(t *testing.T) {
	tests := []struct{ args, want []string }{
		{[]string{"--data-dir=d"}, []string{"--heartbeat-interval=10", "--election-timeout=50", "--data-dir=d"}},
		{[]string{"--election-timeout=1000"}, []string{"--election-timeout=1000"}},
		{[]string{"--heartbeat-interval", "100"}, []string{"--heartbeat-interval", "100"}},
		{[]string{"--initial-cluster=a=http://x,b=http://y"}, []string{"--initial-cluster=a=http://x,b=http://y"}},
		{[]string{"--help"}, []string{"--help"}},
	}
	for _, tt := range tests {
		if got := etcdArgs(tt.args); !slices.Equal(got, tt.want) {
			t.Errorf("etcdArgs(%q) = %q, want %q", tt.args, got, tt.want)
		}
	}
}

func TestWriteAssets(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "assets")
	for range 2 { // the second time replaces the links
		if err := writeAssets(dir, "/path/to/strata-server"); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"kube-apiserver", "etcd", "kubectl"} {
		target, err := os.Readlink(filepath.Join(dir, name))
		if err != nil || target != "/path/to/strata-server" {
			t.Errorf("%s: link to %q (%v), want /path/to/strata-server", name, target, err)
		}
	}
}

func TestRootFor(t *testing.T) {
	for name, use := range map[string]string{"kube-apiserver": "kube-apiserver", "kubectl": "kubectl [KUBECTL FLAGS] COMMAND [ARGS]",
		"strata-server": "strata-server"} {
		if got := rootFor(name).Use; got != use {
			t.Errorf("invoked as %s: runs %q, want %q", name, got, use)
		}
	}
	if rootFor("etcd") != nil {
		t.Error("invoked as etcd: runs a cobra command, want etcd's own")
	}
}
