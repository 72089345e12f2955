package pki

import (
	"bytes"
	"crypto/tls"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

func TestWriteKubeconfig(t *testing.T) {
	dir := t.TempDir()
	s, err := EnsureServing(dir, testHosts)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "sub", "kubeconfig")
	if err := WriteKubeconfig(path, "https://127.0.0.1:6443", s.CAPEM, "tok"); err != nil {
		t.Fatal(err)
	}
	if m := mode(t, path); m != 0o600 {
		t.Errorf("kubeconfig has mode %o, want 600", m)
	}
	cfg, err := clientcmd.LoadFromFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.CurrentContext != "strata" {
		t.Errorf("current context %q, want strata", cfg.CurrentContext)
	}
	if c := cfg.Contexts["strata"]; c == nil || c.Cluster != "strata" || c.AuthInfo != "strata-admin" {
		t.Errorf("context strata = %+v, want cluster strata and user strata-admin", c)
	}
	if c := cfg.Clusters["strata"]; c == nil || c.CertificateAuthority != "" {
		t.Errorf("cluster strata = %+v, want inline CA data and no CA file", c)
	}
	rc, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		t.Fatal(err)
	}
	if rc.Host != "https://127.0.0.1:6443" || rc.BearerToken != "tok" || !bytes.Equal(rc.CAData, s.CAPEM) {
		t.Errorf("rest.Config host %q token %q CA data equal %v", rc.Host, rc.BearerToken, bytes.Equal(rc.CAData, s.CAPEM))
	}

	// Written again with other values, the file is replaced whole.
	if err := WriteKubeconfig(path, "https://localhost:7443", s.CAPEM, "tok2"); err != nil {
		t.Fatal(err)
	}
	rc, err = clientcmd.BuildConfigFromFlags("", path)
	if err != nil || rc.Host != "https://localhost:7443" || rc.BearerToken != "tok2" {
		t.Errorf("after rewrite: %v host %q token %q", err, rc.Host, rc.BearerToken)
	}
	if matches, _ := filepath.Glob(filepath.Join(dir, "sub", ".kubeconfig.tmp-*")); len(matches) != 0 {
		t.Errorf("temporary files left behind: %v", matches)
	}
}

func TestWriteKubeconfigWithoutCA(t *testing.T) {
	tests := []struct {
		server, restToken string
	}{
		{server: "https://strata.example:6443", restToken: "tok"},
		// client-go applies a user's credentials only over TLS.
		{server: "http://127.0.0.1:8080", restToken: ""},
	}
	for _, tt := range tests {
		path := filepath.Join(t.TempDir(), "kubeconfig")
		if err := WriteKubeconfig(path, tt.server, nil, "tok"); err != nil {
			t.Fatalf("%s: %v", tt.server, err)
		}
		cfg, err := clientcmd.LoadFromFile(path)
		if err != nil || cfg.AuthInfos["strata-admin"] == nil || cfg.AuthInfos["strata-admin"].Token != "tok" {
			t.Fatalf("%s: %v, users %v", tt.server, err, cfg.AuthInfos)
		}
		rc, err := clientcmd.BuildConfigFromFlags("", path)
		if err != nil || rc.Host != tt.server || len(rc.CAData) != 0 || rc.BearerToken != tt.restToken {
			t.Errorf("%s: %v host %q CA data %d bytes token %q", tt.server, err, rc.Host, len(rc.CAData), rc.BearerToken)
		}
	}
}

func TestWriteKubeconfigRejects(t *testing.T) {
	s, err := EnsureServing(t.TempDir(), testHosts)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, server, token string
		ca                  []byte
		want                string
	}{
		{name: "ftp", server: "ftp://127.0.0.1:6443", ca: s.CAPEM, token: "t", want: "want https"},
		{name: "http with CA", server: "http://127.0.0.1:6443", ca: s.CAPEM, token: "t", want: "CA data given for plain HTTP"},
		{name: "no host", server: "https://", ca: s.CAPEM, token: "t", want: "want https"},
		{name: "bad URL", server: "https://[::1", ca: s.CAPEM, token: "t", want: "server URL"},
		{name: "no CA", server: "https://127.0.0.1:6443", ca: []byte("x"), token: "t", want: "no PEM certificate"},
		{name: "no token", server: "https://127.0.0.1:6443", ca: s.CAPEM, want: "token is empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "kubeconfig")
			err := WriteKubeconfig(path, tt.server, tt.ca, tt.token)
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), path) {
				t.Fatalf("error %v, want one naming %s and containing %q", err, path, tt.want)
			}
		})
	}
}

// TestKubeconfigTLSHandshake serves HTTPS with the serving pair and calls it
// with the transport of the kubeconfig's rest.Config, by IP and by name.
func TestKubeconfigTLSHandshake(t *testing.T) {
	dir := t.TempDir()
	s, err := EnsureServing(dir, []string{"127.0.0.1", "localhost"})
	if err != nil {
		t.Fatal(err)
	}
	pair, err := tls.LoadX509KeyPair(s.CertFile, s.KeyFile)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, r.Header.Get("Authorization"))
	}))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{pair}}
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the failed handshake is expected
	srv.StartTLS()
	defer srv.Close()
	u, _ := url.Parse(srv.URL)

	otherCA, err := EnsureServing(t.TempDir(), []string{"127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		server string
		ca     []byte
		ok     bool
	}{
		{name: "by IP", server: "https://127.0.0.1:" + u.Port(), ca: s.CAPEM, ok: true},
		{name: "by name", server: "https://localhost:" + u.Port(), ca: s.CAPEM, ok: true},
		{name: "another CA", server: srv.URL, ca: otherCA.CAPEM},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "kubeconfig")
			if err := WriteKubeconfig(path, tt.server, tt.ca, "secret"); err != nil {
				t.Fatal(err)
			}
			rc, err := clientcmd.BuildConfigFromFlags("", path)
			if err != nil {
				t.Fatal(err)
			}
			client, err := rest.HTTPClientFor(rc)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := client.Get(tt.server + "/version")
			if !tt.ok {
				if err == nil || !strings.Contains(err.Error(), "certificate") {
					t.Fatalf("error %v, want a certificate verification failure", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			if string(body) != "Bearer secret" {
				t.Errorf("server saw Authorization %q, want %q", body, "Bearer secret")
			}
		})
	}
}
