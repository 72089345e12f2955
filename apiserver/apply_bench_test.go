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
	ts := newTestServer(b)
	handler := ts.api.Handler()
	do := func(ctype, path string, body []byte) {
		req := httptest.NewRequest(http.MethodPatch, path, bytes.NewReader(body))
		req.Header.Set("Content-Type", ctype)
		rec := httptest.NewRecorder()
		handler.ServeHTTP(rec, req)
		if rec.Code >= 300 {
			b.Fatalf("%d %s", rec.Code, rec.Body.Bytes())
		}
	}
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
