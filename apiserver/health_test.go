package apiserver

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/time/rate"
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

// TestSeenReady: SeenReady closes with the first 200 of /readyz itself,
// not with a failing /readyz nor with another path's 200.
func TestSeenReady(t *testing.T) {
	var starting atomic.Bool
	starting.Store(true)
	gate := HealthCheck{Name: "gate", Quiet: true, Check: func(context.Context) error {
		if starting.Load() {
			return errors.New("starting")
		}
		return nil
	}}
	ts := newTestServer(t, func(c *Config) { c.ReadyChecks = append(c.ReadyChecks, gate) })
	seen := func() bool {
		select {
		case <-ts.api.SeenReady():
			return true
		default:
			return false
		}
	}
	for i, step := range []struct {
		path     string
		starting bool
		code     int
		seen     bool
	}{
		{path: "/readyz", starting: true, code: 500},
		{path: "/readyz/etcd", starting: true, code: 200},
		{path: "/healthz", starting: true, code: 200},
		{path: "/readyz/gate", code: 200},
		{path: "/readyz", code: 200, seen: true},
		{path: "/readyz", starting: true, code: 500, seen: true}, // once seen, stays seen
	} {
		starting.Store(step.starting)
		code, body := ts.send(t, http.MethodGet, step.path, "", nil)
		if code != step.code || seen() != step.seen {
			t.Errorf("step %d: GET %s: %d (seen ready: %v)\n%s\nwant %d (seen ready: %v)", i, step.path, code, seen(), body, step.code, step.seen)
		}
	}
	// A server builds its handler more than once (the loopback has its
	// own): another handler's first 200 finds it already seen.
	starting.Store(false)
	rec := httptest.NewRecorder()
	ts.api.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/readyz", nil))
	if rec.Code != http.StatusOK || !seen() {
		t.Errorf("GET /readyz on a second handler: %d (seen ready: %v)\n%s\nwant 200 (seen ready: true)", rec.Code, seen(), rec.Body)
	}
}

// TestEtcdProbe: the etcd checks read at most once per half timeout, as
// kube-apiserver's, answering in between with the last read's result.
func TestEtcdProbe(t *testing.T) {
	reads := 0
	results := []error{errors.New("etcd: context deadline exceeded"), nil}
	p := newEtcdProbe(func(context.Context) error {
		reads++
		return results[reads-1]
	})
	p.limiter = rate.NewLimiter(rate.Every(50*time.Millisecond), 1)
	ctx := context.Background()
	if err := p.check(ctx); err != results[0] || reads != 1 {
		t.Fatalf("first check: %v after %d reads, want %v after 1", err, reads, results[0])
	}
	if err := p.check(ctx); err != results[0] || reads != 1 {
		t.Fatalf("check within the interval: %v after %d reads, want the last result without reading", err, reads)
	}
	time.Sleep(60 * time.Millisecond)
	if err := p.check(ctx); err != nil || reads != 2 {
		t.Fatalf("check after the interval: %v after %d reads, want nil after 2", err, reads)
	}

	unread := newEtcdProbe(func(context.Context) error { return nil })
	unread.limiter = rate.NewLimiter(rate.Every(time.Hour), 0)
	if err := unread.check(ctx); err == nil || err.Error() != "etcd: not read yet" {
		t.Fatalf("check before any read: %v", err)
	}
}
