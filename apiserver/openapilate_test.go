package apiserver

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stratadev/strata/registry"
)

// TestWarmOpenAPI checks that every built-in v3 document builds (New leaves
// them to be built later) and that, once warm, /openapi/v3 names each with
// the hash its document is served under.
func TestWarmOpenAPI(t *testing.T) {
	svc, err := BuildOpenAPI(registry.Builtin(), "v1.37.2").wait(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.Warm(); err != nil {
		t.Fatalf("Warm: %v", err)
	}
	rec := httptest.NewRecorder()
	svc.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/openapi/v3", nil))
	var discovery struct {
		Paths map[string]struct {
			ServerRelativeURL string `json:"serverRelativeURL"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &discovery); rec.Code != http.StatusOK || err != nil {
		t.Fatalf("GET /openapi/v3: %d, %v", rec.Code, err)
	}
	for _, want := range []string{"api/v1", "apis/apps/v1", "apis/rbac.authorization.k8s.io/v1", "apis"} {
		if _, ok := discovery.Paths[want]; !ok {
			t.Errorf("/openapi/v3 does not name %s", want)
		}
	}
	for path, gv := range discovery.Paths {
		rec := httptest.NewRecorder()
		svc.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, gv.ServerRelativeURL, nil))
		if rec.Code != http.StatusOK || rec.Header().Get("Cache-Control") != "public, immutable" ||
			!strings.Contains(rec.Body.String(), `"openapi":"3.0.0"`) {
			t.Errorf("GET %s (%s): %d, Cache-Control %q, %d bytes", gv.ServerRelativeURL, path, rec.Code,
				rec.Header().Get("Cache-Control"), rec.Body.Len())
		}
	}
}
