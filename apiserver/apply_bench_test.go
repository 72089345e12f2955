package apiserver

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
)

// BenchmarkApplyDeployment applies a Deployment through the handler, one
// annotation changed per request, beside the same change by strategic
// merge patch: the cost of server-side apply over a patch.
func BenchmarkApplyDeployment(b *testing.B) {
	serve := handlerOf(b, newTestServer(b), "")
	do := func(ctype, path string, body []byte) { serve(http.MethodPatch, ctype, path, body) }
	config := func(i int) []byte {
		return []byte(deploymentConfig(`"replicas":1,`, "nginx", fmt.Sprintf(`,"annotations":{"n":"%d"}`, i)))
	}
	do("application/apply-patch+yaml", depPath+"/web?fieldManager=bench", config(0))
	b.Run("apply", func(b *testing.B) {
		for i := range b.N {
			do("application/apply-patch+yaml", depPath+"/web?fieldManager=bench", config(i+1))
		}
	})
	b.Run("strategic", func(b *testing.B) {
		for i := range b.N {
			do("application/strategic-merge-patch+json", depPath+"/web", fmt.Appendf(nil, `{"metadata":{"annotations":{"n":"s%d"}}}`, i))
		}
	})
}

// handlerOf sends requests straight to ts's handler, asking for accept
// (none: the default, JSON), and fails b on any answer but a success.
func handlerOf(b *testing.B, ts *testServer, accept string) func(method, ctype, path string, body []byte) {
	handler := ts.api.Handler()
	return func(method, ctype, path string, body []byte) {
		req := httptest.NewRequest(method, path, bytes.NewReader(body))
		req.Header.Set("Content-Type", ctype)
		if accept != "" {
			req.Header.Set("Accept", accept)
		}
		rec := httptest.NewRecorder()
		handler.ServeHTTP(rec, req)
		if rec.Code >= 300 {
			b.Fatalf("%s %s: %d %s", method, path, rec.Code, rec.Body.Bytes())
		}
	}
}
