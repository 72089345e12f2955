package filters

import (
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// held sends requests that block in the fake API and waits until all are
// being served; release lets them finish.
type held struct {
	s  *testServer
	wg sync.WaitGroup
}

func (h *held) start(t *testing.T, method, path, token string) {
	t.Helper()
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		req, _ := http.NewRequest(method, h.s.URL+path, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		if resp, err := h.s.Client().Do(req); err == nil {
			// To the end, which comes after the server is done with it,
			// log line and metrics included.
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}()
	select {
	case <-h.s.api.entered:
	case <-time.After(10 * time.Second):
		t.Fatalf("%s %s: not served after 10s", method, path)
	}
}

func (h *held) release() {
	close(h.s.api.release)
	h.wg.Wait()
}

// TestMaxInFlight fills both pools and checks who is refused, how, and
// what the metrics say.
func TestMaxInFlight(t *testing.T) {
	s := newTestServer(t, Config{MaxRequestsInFlight: 2, MaxMutatingRequestsInFlight: 1})
	h := &held{s: s}
	defer h.release()
	h.start(t, "GET", "/api/v1/namespaces/default/pods?block", "alice")
	h.start(t, "GET", "/api/v1/namespaces/default/pods/p?block", "alice")
	h.start(t, "POST", "/api/v1/namespaces/default/pods?block", "alice")
	// Watches take no slot: two more are served while the pools are full.
	h.start(t, "GET", "/api/v1/namespaces/default/pods?watch=true&block&flush", "alice")
	h.start(t, "GET", "/api/v1/watch/namespaces/default/pods?block&flush", "alice")

	for _, tt := range []struct {
		name, method, path, token string
		wantCode                  int
	}{
		{"read-only beyond the limit", "GET", "/api/v1/namespaces", "alice", http.StatusTooManyRequests},
		{"mutating beyond the limit", "DELETE", "/api/v1/namespaces/default/pods/p", "alice", http.StatusTooManyRequests},
		{"system:masters is never refused", "GET", "/api/v1/namespaces", "admin", http.StatusOK},
		{"nor is its mutating request", "PUT", "/api/v1/namespaces/default", "admin", http.StatusOK},
		{"authentication comes first", "GET", "/api/v1/namespaces", "", http.StatusUnauthorized},
	} {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := s.do(t, tt.method, tt.path, tt.token)
			if resp.StatusCode != tt.wantCode {
				t.Fatalf("%s, want %d: %s", resp.Status, tt.wantCode, body)
			}
			if tt.wantCode != http.StatusTooManyRequests {
				return
			}
			// kube-apiserver's answer, byte for byte: http.Error's.
			wantHeader := map[string]string{"Retry-After": "1", "Content-Type": "text/plain; charset=utf-8",
				"X-Content-Type-Options": "nosniff"}
			for name, want := range wantHeader {
				if got := resp.Header.Get(name); got != want {
					t.Errorf("%s: %q, want %q", name, got, want)
				}
			}
			if want := "Too many requests, please try again later.\n"; body != want {
				t.Errorf("body %q, want %q", body, want)
			}
		})
	}

	// The gauges show the peaks (testClock stands still): the held
	// requests and admin's, which the scrape (admin's too) repeats.
	families := s.scrape(t)
	wantInflight := map[string]float64{key("request_kind", "readOnly"): 3, key("request_kind", "mutating"): 2}
	if diff := cmp.Diff(wantInflight, values(families, "apiserver_current_inflight_requests")); diff != "" {
		t.Errorf("apiserver_current_inflight_requests (-want +got):\n%s", diff)
	}
	wantLongRunning := map[string]float64{
		key("verb", "WATCH", "group", "", "version", "v1", "resource", "pods", "subresource", "", "scope", "namespace", "component", "apiserver"): 2,
	}
	if diff := cmp.Diff(wantLongRunning, values(families, "apiserver_longrunning_requests")); diff != "" {
		t.Errorf("apiserver_longrunning_requests (-want +got):\n%s", diff)
	}
	wantTerminations := map[string]float64{
		key("verb", "LIST", "group", "", "version", "v1", "resource", "namespaces", "subresource", "", "scope", "cluster", "component", "apiserver", "code", "429"): 1,
		key("verb", "DELETE", "group", "", "version", "v1", "resource", "pods", "subresource", "", "scope", "resource", "component", "apiserver", "code", "429"):    1,
	}
	if diff := cmp.Diff(wantTerminations, values(families, "apiserver_request_terminations_total")); diff != "" {
		t.Errorf("apiserver_request_terminations_total (-want +got):\n%s", diff)
	}
	got429 := 0.0
	for k, n := range values(families, "apiserver_request_total") {
		if k == (series{"LIST", "", "", "v1", "namespaces", "", "cluster", "apiserver", "429"}).key(true) ||
			k == (series{"DELETE", "", "", "v1", "pods", "", "resource", "apiserver", "429"}).key(true) {
			got429 += n
		}
	}
	if got429 != 2 {
		t.Errorf("apiserver_request_total counts %v requests with code 429, want 2", got429)
	}
}

// TestMaxInFlightLimits: each limit applies to its own kind of request,
// and 0 is unlimited.
func TestMaxInFlightLimits(t *testing.T) {
	for _, tt := range []struct {
		name               string
		readOnly, mutating int
		hold               []string // methods of the held requests
		method             string   // of the request tried next
		wantCode           int
	}{
		{"read-only pool full", 1, 1, []string{"GET"}, "GET", http.StatusTooManyRequests},
		{"mutating pool is separate", 1, 1, []string{"GET"}, "POST", http.StatusOK},
		{"read-only pool is separate", 1, 1, []string{"POST"}, "GET", http.StatusOK},
		{"mutating pool full", 1, 1, []string{"PATCH"}, "DELETE", http.StatusTooManyRequests},
		{"read-only unlimited", 0, 1, []string{"GET", "GET", "GET"}, "GET", http.StatusOK},
		{"mutating unlimited", 1, 0, []string{"POST", "PUT", "DELETE"}, "PATCH", http.StatusOK},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := newTestServer(t, Config{MaxRequestsInFlight: tt.readOnly, MaxMutatingRequestsInFlight: tt.mutating})
			h := &held{s: s}
			defer h.release()
			for _, method := range tt.hold {
				h.start(t, method, "/api/v1/namespaces/default/configmaps/c?block", "alice")
			}
			path := "/api/v1/namespaces/default/configmaps/c"
			if tt.method == "POST" {
				path = "/api/v1/namespaces/default/configmaps"
			}
			if resp, body := s.do(t, tt.method, path, "alice"); resp.StatusCode != tt.wantCode {
				t.Errorf("%s %s: %s, want %d: %s", tt.method, path, resp.Status, tt.wantCode, body)
			}
		})
	}
}

// TestWatermark: the in-flight gauge shows the highest count of about the
// last second.
func TestWatermark(t *testing.T) {
	now := time.Unix(1000, 0)
	w := &watermark{now: func() time.Time { return now }}
	for _, step := range []struct {
		advance time.Duration
		add     int
		want    float64
	}{
		{0, 1, 1},
		{0, 1, 2},
		{100 * time.Millisecond, -1, 2}, // the peak of 2 is still recent
		{500 * time.Millisecond, -1, 2},
		{500 * time.Millisecond, 0, 0}, // a second after the peak
		{0, 1, 1},
		{2 * time.Second, 0, 1}, // still one in flight
	} {
		now = now.Add(step.advance)
		w.add(step.add)
		if got := w.value(); got != step.want {
			t.Fatalf("after %+v: %v, want %v", step, got, step.want)
		}
	}
}
