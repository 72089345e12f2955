package apiserver

import (
	"fmt"
	"net/http"
	"testing"
)

// BenchmarkWrites runs the load generator's writes through the handler,
// answered in protobuf as client-go's clients ask: a create and an update
// of a ConfigMap, and an apply of a Deployment (one annotation changed per
// request). The handler's CPU, without HTTP/2 and TLS, is what strata's own
// code spends on each.
func BenchmarkWrites(b *testing.B) {
	do := handlerOf(b, newTestServer(b), acceptClientGo)
	const cms = "/api/v1/namespaces/default/configmaps"
	cm := func(name, value string) []byte {
		return fmt.Appendf(nil, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":%q},"data":{"k":%q}}`, name, value)
	}
	created := 0 // over the runs of the sub-benchmark, so each name is new
	b.Run("create", func(b *testing.B) {
		for range b.N {
			created++
			do(http.MethodPost, "application/json", cms, cm(fmt.Sprintf("c-%d", created), "v"))
		}
	})
	do(http.MethodPost, "application/json", cms, cm("u", "0"))
	b.Run("update", func(b *testing.B) {
		for i := range b.N {
			do(http.MethodPut, "application/json", cms+"/u", cm("u", fmt.Sprint(i+1)))
		}
	})
	config := func(i int) []byte {
		return []byte(deploymentConfig(`"replicas":1,`, "nginx", fmt.Sprintf(`,"annotations":{"n":"%d"}`, i)))
	}
	do(http.MethodPatch, "application/apply-patch+yaml", depPath+"/web?fieldManager=bench", config(0))
	b.Run("apply", func(b *testing.B) {
		for i := range b.N {
			do(http.MethodPatch, "application/apply-patch+yaml", depPath+"/web?fieldManager=bench", config(i+1))
		}
	})
}
