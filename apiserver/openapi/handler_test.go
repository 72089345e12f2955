package openapi

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/kube-openapi/pkg/handler3"
	generatedopenapi "k8s.io/kubernetes/pkg/generated/openapi"
)

// TestHandler checks the HTTP behaviour kube-openapi's handlers give
// kube-apiserver: content negotiation, ETags, gzip and v3 hash URLs.
func TestHandler(t *testing.T) {
	svc := testService(t)
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "elsewhere", http.StatusTeapot) })
	svc.Install(mux)
	srv := httptest.NewServer(mux)
	defer srv.Close()
	client := &http.Client{
		Transport:     &http.Transport{DisableCompression: true},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	get := func(t *testing.T, path string, header map[string]string) *http.Response {
		t.Helper()
		req, err := http.NewRequest("GET", srv.URL+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range header {
			req.Header.Set(k, v)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		return resp
	}

	// The current hash of apis/apps/v1, from the discovery document.
	var disc handler3.OpenAPIV3Discovery
	if err := json.NewDecoder(get(t, "/openapi/v3", nil).Body).Decode(&disc); err != nil {
		t.Fatal(err)
	}
	appsURL := disc.Paths["apis/apps/v1"].ServerRelativeURL
	if !strings.Contains(appsURL, "?hash=") {
		t.Fatalf("serverRelativeURL %q has no hash", appsURL)
	}
	v2ETag := get(t, "/openapi/v2", nil).Header.Get("Etag")

	tests := []struct {
		name, path string
		header     map[string]string
		status     int
		want       map[string]string // response headers, by prefix
	}{
		{"v2 json", "/openapi/v2", map[string]string{"Accept": "application/json"}, 200,
			map[string]string{"Content-Type": "application/json", "Etag": `"`, "Vary": "Accept"}},
		{"v2 protobuf", "/openapi/v2", map[string]string{"Accept": "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"}, 200,
			map[string]string{"Content-Type": "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"}},
		{"v2 gzip", "/openapi/v2", map[string]string{"Accept-Encoding": "gzip"}, 200,
			map[string]string{"Content-Encoding": "gzip"}},
		{"v2 not modified", "/openapi/v2", map[string]string{"If-None-Match": v2ETag}, 304, nil},
		{"v2 not acceptable", "/openapi/v2", map[string]string{"Accept": "text/html"}, 406, nil},
		{"v3 discovery", "/openapi/v3", nil, 200, map[string]string{"Content-Type": "application/json"}},
		{"v3 document", "/openapi/v3/apis/apps/v1", nil, 200, map[string]string{"Content-Type": "application/json"}},
		{"v3 document with hash", appsURL, nil, 200,
			map[string]string{"Cache-Control": "public, immutable", "Expires": ""}},
		{"v3 document with old hash", "/openapi/v3/apis/apps/v1?hash=0123", nil, 301,
			map[string]string{"Location": appsURL}},
		{"v3 protobuf", "/openapi/v3/api/v1", map[string]string{"Accept": "application/com.github.proto-openapi.spec.v3@v1.0+protobuf"}, 200,
			map[string]string{"Content-Type": "application/com.github.proto-openapi.spec.v3.v1.0+protobuf"}},
		{"v3 unknown document", "/openapi/v3/apis/example.com/v1", nil, 404, nil},
		{"v3 unserved version", "/openapi/v3/apis/apps/v1beta1", nil, 404, nil},
		{"other path", "/openapi/v4", nil, http.StatusTeapot, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := get(t, tt.path, tt.header)
			if resp.StatusCode != tt.status {
				body, _ := io.ReadAll(resp.Body)
				t.Fatalf("status %d, want %d: %.200s", resp.StatusCode, tt.status, body)
			}
			for k, prefix := range tt.want {
				if got := resp.Header.Get(k); got == "" || !strings.HasPrefix(got, prefix) {
					t.Errorf("%s = %q, want prefix %q", k, got, prefix)
				}
			}
		})
	}
}

// TestWarmKeepsJSON checks that Warm leaves only the encoded documents in
// memory and that they are served as before: the same JSON and protobuf
// under the same hash URLs, built from the documents it emptied, and still
// after a change adds a group (which replaces the discovery documents).
func TestWarmKeepsJSON(t *testing.T) {
	reference := testService(t)
	svc, err := New(generatedopenapi.GetOpenAPIDefinitions, scheme.Scheme, testResources)
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.Warm(); err != nil {
		t.Fatal(err)
	}
	for _, p := range v3Paths(t, svc) {
		if doc, _, err := (*svc.docs.Load())[p].Get(); err != nil || doc.Components != nil || doc.Paths != nil {
			t.Errorf("%s after Warm: %v, components %v; want it emptied", p, err, doc.Components != nil)
		}
	}
	refDC, _ := testServer(t, reference)
	dc, _ := testServer(t, svc)
	check := func(t *testing.T) {
		want, err := refDC.OpenAPIV3().Paths()
		if err != nil {
			t.Fatal(err)
		}
		got, err := dc.OpenAPIV3().Paths()
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range []string{"api/v1", "apis/apps/v1", "apis/batch/v1", "apis"} {
			if got[p].ServerRelativeURL() != want[p].ServerRelativeURL() {
				t.Errorf("%s: URL %s, want %s", p, got[p].ServerRelativeURL(), want[p].ServerRelativeURL())
			}
			for _, ct := range []string{"application/json", "application/com.github.proto-openapi.spec.v3@v1.0+protobuf"} {
				g, err1 := got[p].Schema(ct)
				w, err2 := want[p].Schema(ct)
				if err1 != nil || err2 != nil || !bytes.Equal(g, w) || len(g) < 1000 {
					t.Errorf("%s as %s: %d bytes (%v), want the reference's %d (%v)", p, ct, len(g), err1, len(w), err2)
				}
			}
		}
	}
	check(t)
	if err := svc.SetGroupVersion(widgetGV, widgets, widgetSchema("size")); err != nil {
		t.Fatal(err)
	}
	if err := svc.Warm(); err != nil {
		t.Fatal(err)
	}
	if err := reference.SetGroupVersion(widgetGV, widgets, widgetSchema("size")); err != nil {
		t.Fatal(err)
	}
	defer reference.SetGroupVersion(widgetGV, nil, nil)
	check(t)
	if doc := v3Doc(t, dc, "apis/example.com/v1"); doc.Components == nil || doc.Components.Schemas["com.example.v1.Widget"] == nil {
		t.Errorf("apis/example.com/v1 after a change and Warm lacks the Widget schema")
	}
}
