package filters

import (
	"net/http"
	"testing"
	"time"
)

// TestRequestDeadline: requests that are not long-running end with
// kube-apiserver's 504 at --request-timeout or a shorter ?timeout=; a
// malformed ?timeout= is 400 before authentication; watches and requests
// that finish in time are not touched.
func TestRequestDeadline(t *testing.T) {
	const timeout504 = `{"metadata":{},"status":"Failure","message":"Timeout: request did not complete within the allotted timeout","reason":"Timeout","details":{},"code":504}` + "\n"
	for _, tt := range []struct {
		name, path, token string
		timeout           time.Duration
		wantCode          int
		wantBody          string // "" skips the body check
	}{
		{"blocked beyond --request-timeout", "/api/v1/namespaces/default/pods/p?block", "alice",
			50 * time.Millisecond, http.StatusGatewayTimeout, timeout504},
		{"blocked beyond ?timeout=", "/api/v1/namespaces/default/pods/p?block&timeout=50ms", "alice",
			time.Hour, http.StatusGatewayTimeout, timeout504},
		{"malformed ?timeout=", "/api/v1/namespaces/default/pods/p?timeout=soon", "",
			time.Minute, http.StatusBadRequest,
			`{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"invalid timeout specified in the request URL - time: invalid duration \"soon\"","reason":"BadRequest","code":400}` + "\n"},
		{"in time", "/api/v1/namespaces/default/pods/p?timeout=10s", "alice", time.Minute, http.StatusOK, "{}"},
		{"a watch outlives the timeout", "/api/v1/namespaces/default/pods?watch=true&block&flush", "alice",
			50 * time.Millisecond, http.StatusOK, ""},
		{"no timeout configured", "/api/v1/namespaces/default/pods/p?block", "alice", 0, http.StatusOK, "{}"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := newTestServer(t, Config{RequestTimeout: tt.timeout})
			// Deadlines count from the received timestamp: real time here.
			s.metrics.now = time.Now
			go func() {
				// A blocked handler is released a little after the
				// timeout has had its chance to answer.
				if _, ok := <-s.api.entered; ok {
					time.Sleep(200 * time.Millisecond)
					close(s.api.release)
				}
			}()
			resp, body := s.do(t, http.MethodGet, tt.path, tt.token)
			if resp.StatusCode != tt.wantCode {
				t.Fatalf("%s: %s, want %d: %s", tt.path, resp.Status, tt.wantCode, body)
			}
			if tt.wantBody != "" && body != tt.wantBody {
				t.Errorf("body\n%s\nwant\n%s", body, tt.wantBody)
			}
		})
	}
}
