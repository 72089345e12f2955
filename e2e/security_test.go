package e2e

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The user of TestSecurity's --token-auth-file.
const (
	userToken = "e2e-user-token-31a7"
	userName  = "alice"
)

// TestSecurity sends raw HTTPS requests, trusting only the CA of the
// kubeconfig: what needs a token, what anonymous users may read (RBAC's
// system:public-info-viewer), what an unbound user may not, and no plain
// HTTP.
func TestSecurity(t *testing.T) {
	t.Parallel()
	dataDir := t.TempDir()
	tokenFile := filepath.Join(t.TempDir(), "tokens.csv")
	if err := os.WriteFile(tokenFile, []byte(userToken+","+userName+",uid-alice,\"dev,ops\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := startServer(t, dataDir, "--token-auth-file", tokenFile)
	cfg := srv.restConfig(t)
	if !strings.HasPrefix(cfg.Host, "https://") {
		t.Fatalf("kubeconfig server %q, want https://", cfg.Host)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(cfg.CAData) {
		t.Fatalf("kubeconfig: no CA certificate in certificate-authority-data")
	}
	if cfg.BearerToken == "" {
		t.Fatal("kubeconfig: no token")
	}
	if token := strings.TrimSpace(string(readFile(t, filepath.Join(srv.pkiDir(), "admin.token")))); token != cfg.BearerToken {
		t.Errorf("kubeconfig token is not the one in pki/admin.token")
	}
	client := &http.Client{Timeout: 10 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}

	for _, tt := range []struct {
		name, path, token string
		wantCode          int
		wantStatus        *metav1.Status // for 401s and 403s: the Status body
	}{
		{name: "no token", path: "/api/v1/namespaces", wantCode: 403, wantStatus: forbidden(
			`namespaces is forbidden: User "system:anonymous" cannot list resource "namespaces" in API group "" at the cluster scope`, "namespaces")},
		{name: "wrong token", path: "/api/v1/namespaces", token: "not-a-token", wantCode: 401, wantStatus: unauthorized},
		{name: "admin token", path: "/api/v1/namespaces", token: cfg.BearerToken, wantCode: 200},
		{name: "token-auth-file user", path: "/api/v1/namespaces", token: userToken, wantCode: 403, wantStatus: forbidden(
			`namespaces is forbidden: User "alice" cannot list resource "namespaces" in API group "" at the cluster scope`, "namespaces")},
		{name: "wrong token on healthz", path: "/healthz", token: "not-a-token", wantCode: 401, wantStatus: unauthorized},
		{name: "healthz anonymous", path: "/healthz", wantCode: 200},
		{name: "livez anonymous", path: "/livez", wantCode: 200},
		{name: "readyz anonymous", path: "/readyz", wantCode: 200},
		{name: "version anonymous", path: "/version", wantCode: 200},
		{name: "no token on discovery", path: "/apis", wantCode: 403,
			wantStatus: forbidden(`forbidden: User "system:anonymous" cannot get path "/apis"`, "")},
		{name: "token-auth-file user on discovery", path: "/apis", token: userToken, wantCode: 200},
	} {
		t.Run(tt.name, func(t *testing.T) {
			req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, cfg.Host+tt.path, nil)
			if err != nil {
				t.Fatal(err)
			}
			if tt.token != "" {
				req.Header.Set("Authorization", "Bearer "+tt.token)
			}
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tt.wantCode {
				t.Fatalf("GET %s: %s, want %d\n%s", tt.path, resp.Status, tt.wantCode, body)
			}
			if tt.wantStatus != nil {
				var got metav1.Status
				if err := json.Unmarshal(body, &got); err != nil {
					t.Fatalf("GET %s: body is not a Status: %v\n%s", tt.path, err, body)
				}
				if got.Kind != tt.wantStatus.Kind || got.APIVersion != tt.wantStatus.APIVersion || got.Status != tt.wantStatus.Status ||
					got.Message != tt.wantStatus.Message || got.Reason != tt.wantStatus.Reason || got.Code != tt.wantStatus.Code {
					t.Errorf("GET %s: Status %+v\nwant %+v", tt.path, got, *tt.wantStatus)
				}
				if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
					t.Errorf("GET %s: Content-Type %q, want application/json", tt.path, ct)
				}
			}
			if tt.path == "/version" {
				var v struct{ Major, Minor, GitVersion string }
				if err := json.Unmarshal(body, &v); err != nil || !sameRelease(v.GitVersion, kubeVersion) {
					t.Errorf("GET /version: %v: %s, want gitVersion %s", err, body, kubeVersion)
				}
			}
		})
	}

	t.Run("serving certificate", func(t *testing.T) {
		// Verified against the kubeconfig's CA alone, for each name clients dial.
		host := strings.TrimPrefix(cfg.Host, "https://")
		_, port, _ := strings.Cut(host, ":")
		for _, addr := range []string{"127.0.0.1:" + port, "localhost:" + port} {
			conn, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: pool})
			if err != nil {
				t.Errorf("TLS to %s with the kubeconfig's CA: %v", addr, err)
				continue
			}
			conn.Close()
		}
		// Not trusted by the system roots.
		if conn, err := tls.Dial("tcp", host, &tls.Config{}); err == nil {
			conn.Close()
			t.Errorf("TLS to %s verified without the kubeconfig's CA", host)
		}
	})

	t.Run("plain HTTP to the TLS port", func(t *testing.T) {
		url := "http://" + strings.TrimPrefix(cfg.Host, "https://") + "/api/v1/namespaces"
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+cfg.BearerToken)
		resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		const want = "Client sent an HTTP request to an HTTPS server.\n"
		if resp.StatusCode != http.StatusBadRequest || string(body) != want {
			t.Errorf("GET %s: %s %q, want 400 %q", url, resp.Status, body, want)
		}
	})

	t.Run("token-auth-file user with kubectl", func(t *testing.T) {
		k := plainKubectl(t, dataDir)
		k.ok(t, "create", "clusterrolebinding", "alice-view", "--clusterrole=view", "--user="+userName)
		out := k.ok(t, "--token", userToken, "get", "namespace", "default", "-o", "name")
		if out != "namespace/default\n" {
			t.Errorf("get namespace default as %s: %q, want %q", userName, out, "namespace/default\n")
		}
		// A kubectl without a discovery cache logs each failed discovery
		// attempt, then says why it stops.
		r := plainKubectl(t, dataDir).run(t, "--token", "not-a-token", "get", "namespaces")
		const want = "error: You must be logged in to the server (the server has asked for the client to provide credentials)\n"
		if r.code != 1 || r.stdout != "" || !strings.HasSuffix(r.stderr, "\n"+want) {
			t.Errorf("with a wrong token: want exit 1 and stderr ending in %q\n%v", want, r)
		}
	})
}

// forbidden is kube-apiserver's answer to a request its authorizer does
// not allow (kind: the resource, "" for a path).
func forbidden(message, kind string) *metav1.Status {
	st := &metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status: metav1.StatusFailure, Message: message, Reason: metav1.StatusReasonForbidden, Code: 403}
	st.Details = &metav1.StatusDetails{Kind: kind}
	return st
}

// unauthorized is kube-apiserver's answer to a request whose credentials
// fail.
var unauthorized = &metav1.Status{
	TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
	Status:   metav1.StatusFailure, Message: "Unauthorized", Reason: metav1.StatusReasonUnauthorized, Code: 401,
}

// TestPlainHTTPRefusedOffLoopback: --plain-http on a non-loopback address
// is a usage error (exit status 2) that names the flag, and nothing starts.
func TestPlainHTTPRefusedOffLoopback(t *testing.T) {
	t.Parallel()
	dataDir := filepath.Join(t.TempDir(), "data")
	srv := launchServer(t, dataDir, "--plain-http", "--bind-address", "0.0.0.0")
	if code := srv.waitExit(t, 30*time.Second); code != 2 {
		t.Errorf("exit status %d, want 2\n%s", code, srv.log.String())
	}
	if log := srv.log.String(); !strings.Contains(log, "--plain-http") {
		t.Errorf("the message does not name --plain-http:\n%s", log)
	}
	if _, err := os.Stat(filepath.Join(dataDir, "kubeconfig")); err == nil {
		t.Errorf("a kubeconfig was written although the start was refused")
	}
}

// TestPlainHTTPOnLoopback: --plain-http on 127.0.0.1 serves HTTP, and the
// kubeconfig it writes works with kubectl.
func TestPlainHTTPOnLoopback(t *testing.T) {
	t.Parallel()
	dataDir := t.TempDir()
	srv := startServer(t, dataDir, "--plain-http", "--bind-address", "127.0.0.1")
	cfg := srv.restConfig(t)
	if !strings.HasPrefix(cfg.Host, "http://127.0.0.1:") {
		t.Fatalf("kubeconfig server %q, want http://127.0.0.1:PORT", cfg.Host)
	}
	// client-go sends no credentials to an http:// server, so the token is
	// read from the data directory.
	token := strings.TrimSpace(string(readFile(t, filepath.Join(srv.pkiDir(), "admin.token"))))
	client := &http.Client{Timeout: 10 * time.Second}
	for _, tt := range []struct {
		path, token string
		want        int
	}{
		{"/healthz", "", 200},
		{"/api/v1/namespaces", token, 200},
	} {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, cfg.Host+tt.path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if tt.token != "" {
			req.Header.Set("Authorization", "Bearer "+tt.token)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tt.want {
			t.Errorf("GET %s (admin token: %v): %s, want %d", tt.path, tt.token != "", resp.Status, tt.want)
		}
	}
	// The kubeconfig the server wrote works, as it does over HTTPS.
	k := strataKubectl(t, dataDir)
	k.exact(t, "namespace/default\n", "get", "namespace", "default", "-o", "name")
}
