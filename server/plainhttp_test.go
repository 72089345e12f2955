package server

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestPlainHTTPGuard: the unauthenticated plain-HTTP API answers only
// loopback Host names and writes that name their media type.
func TestPlainHTTPGuard(t *testing.T) {
	h := plainHTTPGuard(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "served") }))
	for _, tt := range []struct {
		method, host, contentType string
		code                      int
		body                      string
	}{
		{"GET", "127.0.0.1:8080", "", 200, "served"},
		{"GET", "localhost:8080", "", 200, "served"},
		{"GET", "[::1]:8080", "", 200, "served"},
		{"GET", "127.0.0.2", "", 200, "served"},
		{"GET", "evil.example.com:8080", "", 403,
			"strata: --plain-http answers only loopback host names (localhost, 127.0.0.1, ::1), not \"evil.example.com:8080\"\n"},
		{"GET", "localhost.evil.example.com", "", 403,
			"strata: --plain-http answers only loopback host names (localhost, 127.0.0.1, ::1), not \"localhost.evil.example.com\"\n"},
		{"POST", "127.0.0.1", "application/json", 200, "served"},
		{"POST", "127.0.0.1", "", 415,
			"strata: --plain-http refuses a POST without a Content-Type (application/json, application/yaml, a patch type or protobuf)\n"},
		{"PUT", "127.0.0.1", "", 415,
			"strata: --plain-http refuses a PUT without a Content-Type (application/json, application/yaml, a patch type or protobuf)\n"},
		{"DELETE", "127.0.0.1", "", 200, "served"},
	} {
		req := httptest.NewRequest(tt.method, "http://"+tt.host+"/api/v1/namespaces", strings.NewReader("{}"))
		req.Host = tt.host
		if tt.contentType != "" {
			req.Header.Set("Content-Type", tt.contentType)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != tt.code || rec.Body.String() != tt.body {
			t.Errorf("%s Host %s: %d %q, want %d %q", tt.method, tt.host, rec.Code, rec.Body.String(), tt.code, tt.body)
		}
	}
}
