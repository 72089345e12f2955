package timeout

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/endpoints/request"

	"github.com/stratadev/strata/apiserver/filters"
)

// chain serves api inside strata's filter chain bounded by timeout, with an
// authentication that knows the token "alice".
func chain(t *testing.T, api http.Handler, timeout time.Duration) *httptest.Server {
	t.Helper()
	authenticate := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Authorization") != "Bearer alice" {
				w.WriteHeader(http.StatusUnauthorized)
				return
			}
			next.ServeHTTP(w, r.WithContext(request.WithUser(r.Context(), &user.DefaultInfo{Name: "alice"})))
		})
	}
	srv := httptest.NewServer(filters.Chain(api, filters.Config{Metrics: filters.NewMetrics(),
		Authenticate: authenticate, MaxMutatingRequestsInFlight: 1,
		Bound: func(h http.Handler) http.Handler { return Bound(h, timeout) }}))
	t.Cleanup(srv.Close)
	return srv
}

// TestBound: requests that are not long-running end with kube-apiserver's
// 504 at --request-timeout or a shorter ?timeout=; a malformed ?timeout= is
// 400 before authentication; watches and requests that finish in time are
// not touched.
func TestBound(t *testing.T) {
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
		{"a watch outlives the timeout", "/api/v1/namespaces/default/pods?watch=true&block", "alice",
			50 * time.Millisecond, http.StatusOK, "{}"},
		{"no timeout configured", "/api/v1/namespaces/default/pods/p?block", "alice", 0, http.StatusOK, "{}"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			release := make(chan struct{})
			api := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Query().Has("block") {
					<-release
				}
				io.WriteString(w, "{}")
			})
			srv := chain(t, api, tt.timeout)
			// A blocked handler is released a little after the timeout
			// has had its chance to answer.
			go func() { time.Sleep(200 * time.Millisecond); close(release) }()
			req, err := http.NewRequest(http.MethodGet, srv.URL+tt.path, nil)
			if err != nil {
				t.Fatal(err)
			}
			if tt.token != "" {
				req.Header.Set("Authorization", "Bearer "+tt.token)
			}
			resp, err := srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tt.wantCode {
				t.Fatalf("%s: %s, want %d: %s", tt.path, resp.Status, tt.wantCode, body)
			}
			if tt.wantBody != "" && string(body) != tt.wantBody {
				t.Errorf("body\n%s\nwant\n%s", body, tt.wantBody)
			}
		})
	}
}

// TestSlowBodyLosesItsSlot: a client that sends its body slower than the
// request timeout gets the 504, and the handler's read of the body fails
// at the deadline too, so the in-flight slot is free again (the handler
// no longer waits for the client).
func TestSlowBodyLosesItsSlot(t *testing.T) {
	readErr := make(chan error, 1)
	srv := chain(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, err := io.ReadAll(r.Body)
		readErr <- err
	}), 200*time.Millisecond)
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// Headers and part of the body; the rest never comes.
	fmt.Fprintf(conn, "POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer alice\r\n"+
		"Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"a\":")
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusGatewayTimeout {
		t.Fatalf("%s, want 504", resp.Status)
	}
	select {
	case err := <-readErr:
		if err == nil {
			t.Fatal("the handler read the whole body")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the handler is still reading the slow body")
	}
}
