package apiserver

import (
	"context"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stratadev/strata/storage"
	"github.com/stratadev/strata/storage/etcd"
)

// TestSpaceQuota: an etcd that reached its space quota answers writes as
// kube-apiserver does (500, etcd's message) and fails /readyz by the
// etcd-space check, until the guard's recovery frees space; then writes
// work and /readyz is green again.
func TestSpaceQuota(t *testing.T) {
	cfg, err := etcd.Options{DataDir: filepath.Join(t.TempDir(), "etcd"), UnsafeNoFsync: true, LogLevel: "fatal",
		QuotaBackendBytes: 4 << 20}.Complete()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	srv := etcd.NewServer(cfg)
	if err := srv.Run(ctx); err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); <-srv.Done() })
	cli, err := srv.Client()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.Close() })
	guard := storage.NewSpaceGuard(cli, nil)
	ts := newTestServer(t, func(c *Config) {
		c.Client = cli
		c.ReadyChecks = []HealthCheck{{Name: "etcd-space", Check: guard.Check}}
	})
	cm := func(name string) []byte { return []byte(`{"metadata":{"name":"` + name + `"}}`) }
	for i := 0; ; i++ {
		if _, err := cli.Put(ctx, "/fill", strings.Repeat("x", 512<<10)); err != nil {
			break
		} else if i == 100 {
			t.Fatal("100 puts of 512 KiB did not reach a 4 MiB quota")
		}
	}
	const full = `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"etcdserver: mvcc: database space exceeded","code":500}` + "\n"
	const ready = "[+]ping ok\n[+]log ok\n[+]etcd ok\n[+]etcd-readiness ok\n[+]poststarthook/storage-readiness ok\n"
	for _, tt := range []struct {
		method, path string
		body         []byte
		code         int
		want         string
	}{
		{"POST", cmPath, cm("a"), 500, full},
		{"GET", "/readyz?verbose", nil, 500, ready + "[-]etcd-space failed: reason withheld\n[+]shutdown ok\nreadyz check failed\n"},
		{"GET", "/livez", nil, 200, "ok"},
		{"recover", "", nil, 0, ""},
		{"GET", "/readyz?verbose", nil, 200, ready + "[+]etcd-space ok\n[+]shutdown ok\nreadyz check passed\n"},
		{"POST", cmPath, cm("b"), 201, ""},
	} {
		if tt.method == "recover" {
			if r, err := guard.Recover(ctx); err != nil || !r.Disarmed {
				t.Fatalf("recover: %+v %v", r, err)
			}
			continue
		}
		ct := ""
		if tt.body != nil {
			ct = "application/json"
		}
		code, body := ts.send(t, tt.method, tt.path, ct, tt.body)
		if code != tt.code || tt.want != "" && string(body) != tt.want {
			t.Errorf("%s %s: %d\n%s\nwant %d\n%s", tt.method, tt.path, code, body, tt.code, tt.want)
		}
	}
	if code, _ := ts.send(t, http.MethodGet, cmPath+"/b", "", nil); code != 200 {
		t.Errorf("GET the configmap written after recovery: %d", code)
	}
}
