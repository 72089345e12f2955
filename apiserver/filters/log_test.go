package filters

import (
	"encoding/json"
	"strings"
	"testing"
)

// logLines parses the JSON log of a test server.
func logLines(t *testing.T, log *syncBuffer) []map[string]any {
	t.Helper()
	var lines []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(log.String()), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		lines = append(lines, m)
	}
	return lines
}

func withMessage(lines []map[string]any, msg string) []map[string]any {
	var out []map[string]any
	for _, l := range lines {
		if l["msg"] == msg {
			out = append(out, l)
		}
	}
	return out
}

// TestRequestLog checks the line of each request, and that a watch is
// logged when it ends. As kube-apiserver's httplog (klog -v=3) a request's
// line is at Debug, but a server error's is at Info, outside the probes.
func TestRequestLog(t *testing.T) {
	s := newTestServer(t, Config{})
	for _, tt := range []struct {
		method, path, token string
	}{
		{"GET", "/api/v1/namespaces?limit=1", "alice"},
		{"POST", "/api/v1/namespaces?code=201", "admin"},
		{"GET", "/api/v1/namespaces", ""},
		{"GET", "/healthz", ""},
		{"GET", "/metrics", "admin"},
		{"GET", "/api/v1/namespaces/a?code=500", "admin"},
		{"GET", "/healthz?code=503", ""},
	} {
		s.do(t, tt.method, tt.path, tt.token, "User-Agent", "filters-test/1.0")
	}
	h := &held{s: s}
	h.start(t, "GET", "/api/v1/namespaces?watch=1&block&flush", "alice")
	if n := len(withMessage(logLines(t, s.log), "HTTP")); n != 7 {
		t.Errorf("%d request lines while the watch runs, want 7 (it is logged when it ends)", n)
	}
	h.release()

	want := []map[string]any{
		{"level": "DEBUG", "verb": "LIST", "URI": "/api/v1/namespaces?limit=1", "resp": 200.0, "user": "alice", "userAgent": "filters-test/1.0"},
		{"level": "DEBUG", "verb": "POST", "URI": "/api/v1/namespaces?code=201", "resp": 201.0, "user": "admin", "userAgent": "filters-test/1.0"},
		{"level": "DEBUG", "verb": "LIST", "URI": "/api/v1/namespaces", "resp": 401.0, "user": "", "userAgent": "filters-test/1.0"},
		{"level": "DEBUG", "verb": "GET", "URI": "/healthz", "resp": 200.0, "user": "system:anonymous", "userAgent": "filters-test/1.0"},
		{"level": "DEBUG", "verb": "GET", "URI": "/metrics", "resp": 200.0, "user": "admin", "userAgent": "filters-test/1.0"},
		{"level": "INFO", "verb": "GET", "URI": "/api/v1/namespaces/a?code=500", "resp": 500.0, "user": "admin", "userAgent": "filters-test/1.0"},
		{"level": "DEBUG", "verb": "GET", "URI": "/healthz?code=503", "resp": 503.0, "user": "system:anonymous", "userAgent": "filters-test/1.0"},
		{"level": "DEBUG", "verb": "WATCH", "URI": "/api/v1/namespaces?watch=1&block&flush", "resp": 200.0, "user": "alice", "userAgent": "Go-http-client/1.1"},
	}
	got := withMessage(logLines(t, s.log), "HTTP")
	if len(got) != len(want) {
		t.Fatalf("%d request lines, want %d:\n%s", len(got), len(want), s.log)
	}
	for i, w := range want {
		for k, v := range w {
			if got[i][k] != v {
				t.Errorf("line %d: %s = %#v, want %#v\n%v", i, k, got[i][k], v, got[i])
			}
		}
		if ip, _ := got[i]["srcIP"].(string); !strings.HasPrefix(ip, "127.0.0.1:") {
			t.Errorf("line %d: srcIP %q, want the client's address", i, ip)
		}
		if _, ok := got[i]["latency"].(float64); !ok {
			t.Errorf("line %d: no latency", i)
		}
	}
}

// TestQuietPaths: probes and scrapes are logged at Debug even when they
// fail, also below their paths.
func TestQuietPaths(t *testing.T) {
	for path, want := range map[string]bool{
		"/healthz": true, "/livez": true, "/readyz": true, "/readyz/etcd": true, "/metrics": true,
		"/healthzz": false, "/api/v1/namespaces": false, "/": false, "/version": false,
	} {
		if got := quiet(path); got != want {
			t.Errorf("quiet(%q) = %v, want %v", path, got, want)
		}
	}
}
