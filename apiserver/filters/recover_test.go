package filters

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestPanic: a panic before the answer becomes kube-apiserver's 500, and
// its stack is logged.
func TestPanic(t *testing.T) {
	s := newTestServer(t, Config{})
	resp, body := s.do(t, "GET", "/api/v1/namespaces/default/pods?panic=boom", "alice")
	if resp.StatusCode != http.StatusInternalServerError {
		t.Fatalf("%s, want 500", resp.Status)
	}
	if want := panicMessage + "\n"; body != want {
		t.Errorf("body %q, want %q", body, want)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "text/plain; charset=utf-8" {
		t.Errorf("Content-Type %q, want text/plain; charset=utf-8", ct)
	}
	// The server goes on serving.
	if resp, _ := s.do(t, "GET", "/api/v1/namespaces", "alice"); resp.StatusCode != http.StatusOK {
		t.Errorf("the request after the panic: %s", resp.Status)
	}

	lines := logLines(t, s.log)
	panics := withMessage(lines, "apiserver panic'd")
	if len(panics) != 1 {
		t.Fatalf("%d panic lines, want 1:\n%s", len(panics), s.log)
	}
	p := panics[0]
	if p["level"] != "ERROR" || p["panic"] != "boom" || p["URI"] != "/api/v1/namespaces/default/pods?panic=boom" ||
		!strings.Contains(p["stack"].(string), "(*fakeAPI).ServeHTTP") {
		t.Errorf("panic line %v: want level ERROR, panic boom, the URI and a stack through the handler", p)
	}
	if got := withMessage(lines, "HTTP")[0]["resp"]; got != 500.0 {
		t.Errorf("request line: resp %v, want 500", got)
	}
	want := map[string]float64{
		series{"LIST", "", "", "v1", "pods", "", "namespace", "apiserver", "500"}.key(true):     1,
		series{"LIST", "", "", "v1", "namespaces", "", "cluster", "apiserver", "200"}.key(true): 1,
	}
	if diff := cmp.Diff(want, values(s.scrape(t), "apiserver_request_total")); diff != "" {
		t.Errorf("apiserver_request_total (-want +got):\n%s", diff)
	}
}

// TestAbort: http.ErrAbortHandler, and a panic once the answer has
// begun, abort the response: the client sees the connection end, the
// request is counted as aborted rather than answered.
func TestAbort(t *testing.T) {
	for _, tt := range []struct {
		name, query string
		wantLogged  bool    // an "apiserver panic'd" line
		wantResp    float64 // the status logged: 0 if none was sent
	}{
		{"ErrAbortHandler", "panic=abort", false, 0},
		{"panic after the headers", "panic=late", true, 200},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := newTestServer(t, Config{})
			req, _ := http.NewRequest("GET", s.URL+"/api/v1/namespaces/default/pods/p?"+tt.query, nil)
			req.Header.Set("Authorization", "Bearer alice")
			resp, err := s.Client().Do(req)
			if err == nil {
				_, err = io.ReadAll(resp.Body)
				resp.Body.Close()
			}
			if err == nil {
				t.Fatalf("the response ended normally, want it aborted")
			}

			families := s.scrape(t)
			wantAborts := map[string]float64{
				key("verb", "GET", "group", "", "version", "v1", "resource", "pods", "subresource", "", "scope", "resource"): 1,
			}
			if diff := cmp.Diff(wantAborts, values(families, "apiserver_request_aborts_total")); diff != "" {
				t.Errorf("apiserver_request_aborts_total (-want +got):\n%s", diff)
			}
			if got := values(families, "apiserver_request_total"); len(got) != 0 {
				t.Errorf("apiserver_request_total %v, want the aborted request not counted", got)
			}
			lines := logLines(t, s.log)
			if got := len(withMessage(lines, "apiserver panic'd")) == 1; got != tt.wantLogged {
				t.Errorf("panic logged: %v, want %v\n%s", got, tt.wantLogged, s.log)
			}
			// The first line; the scrape's follows.
			if l := withMessage(lines, "HTTP")[0]; l["aborted"] != true || l["resp"] != tt.wantResp {
				t.Errorf("request line %v, want aborted=true and resp %v", l, tt.wantResp)
			}
		})
	}
}
