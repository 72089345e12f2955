package apiserver

import (
	"net/http"
	"testing"
)

// TestHealthChecks: /healthz, /livez and /readyz answer as kube-apiserver's
// handlers do, with strata's checks by name; a graceful shutdown fails
// /readyz (and only it) by its shutdown check.
func TestHealthChecks(t *testing.T) {
	ts := newTestServer(t)
	const live = "[+]ping ok\n[+]log ok\n[+]etcd ok\n"
	const ready = live + "[+]etcd-readiness ok\n[+]poststarthook/storage-readiness ok\n"
	for _, tt := range []struct {
		path, want string
		code       int
		shutdown   bool // after EndWatches
	}{
		{path: "/healthz", want: "ok", code: 200},
		{path: "/livez", want: "ok", code: 200},
		{path: "/readyz", want: "ok", code: 200},
		{path: "/healthz?verbose", want: live + "healthz check passed\n", code: 200},
		{path: "/livez?verbose", want: live + "livez check passed\n", code: 200},
		{path: "/readyz?verbose", want: ready + "[+]shutdown ok\nreadyz check passed\n", code: 200},
		{path: "/readyz?verbose&exclude=etcd", code: 200,
			want: "[+]ping ok\n[+]log ok\n[+]etcd excluded: ok\n[+]etcd-readiness ok\n[+]poststarthook/storage-readiness ok\n[+]shutdown ok\nreadyz check passed\n"},
		{path: "/readyz/etcd", want: "ok", code: 200},
		{path: "/readyz/poststarthook/storage-readiness", want: "ok", code: 200},
		{path: "/livez/shutdown", want: "404 page not found\n", code: 404},
		{path: "/readyz", shutdown: true, code: 500,
			want: ready + "[-]shutdown failed: reason withheld\nreadyz check failed\n"},
		{path: "/readyz/shutdown", shutdown: true, code: 500, want: "internal server error: process is shutting down\n"},
		{path: "/livez", shutdown: true, want: "ok", code: 200},
	} {
		if tt.shutdown {
			ts.api.EndWatches()
		}
		code, body := ts.send(t, http.MethodGet, tt.path, "", nil)
		if code != tt.code || string(body) != tt.want {
			t.Errorf("GET %s: %d\n%s\nwant %d\n%s", tt.path, code, body, tt.code, tt.want)
		}
	}
}
