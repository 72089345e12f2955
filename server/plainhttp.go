package server

import (
	"fmt"
	"net"
	"net/http"
)

// plainHTTPGuard keeps web pages off the unauthenticated --plain-http API.
// A page can reach a loopback port by DNS rebinding (a name of its own
// that resolves to 127.0.0.1), so only loopback Host names are answered
// (403 otherwise); and a page may send a POST without preflight when it
// sets no Content-Type, which the API would read as JSON, so a write must
// name its media type (415 otherwise). Clients such as kubectl and
// client-go always do both.
func plainHTTPGuard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !loopbackHost(r.Host) {
			http.Error(w, fmt.Sprintf("strata: --plain-http answers only loopback host names (localhost, 127.0.0.1, ::1), not %q", r.Host),
				http.StatusForbidden)
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead && r.Method != http.MethodDelete &&
			r.Header.Get("Content-Type") == "" {
			http.Error(w, "strata: --plain-http refuses a "+r.Method+" without a Content-Type (application/json, application/yaml, a patch type or protobuf)",
				http.StatusUnsupportedMediaType)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// loopbackHost says whether a Host header names the local machine.
func loopbackHost(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
