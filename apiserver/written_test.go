package apiserver

import (
	"bytes"
	"net/http"
	"testing"
)

// TestProtobufWriteAnswerIsTheStoredObject: a write answered in protobuf
// is encoded from the typed object the strategy made (writeWritten), not
// converted back from the stored one; each answer must be, byte for byte,
// what a GET of the object answers next, which is encoded from the stored
// object. The kinds cover defaults, quantities, allocated fields,
// microsecond times and managedFields; the no-op update answers the
// stored object itself. (A CRD is checked in registry's
// TestPreparedProtobufOfCRD: its controller updates it as soon as it is
// created, so a GET may see a newer one.)
func TestProtobufWriteAnswerIsTheStoredObject(t *testing.T) {
	ts := newTestServer(t)
	const (
		cms    = "/api/v1/namespaces/default/configmaps"
		deps   = "/apis/apps/v1/namespaces/default/deployments"
		leases = "/apis/coordination.k8s.io/v1/namespaces/default/leases"
		svcs   = "/api/v1/namespaces/default/services"
		js     = "application/json"
	)
	cm := func(v string) string {
		return `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","labels":{"l":"1"}},"data":{"a":"` + v + `"}}`
	}
	deployment := `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web"},
 "spec":{"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},
 "spec":{"containers":[{"name":"web","image":"nginx","resources":{"requests":{"cpu":"0.5","memory":"1024Mi"}}}]}}}}`
	applied := "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 4\n" +
		"  selector:\n    matchLabels:\n      app: web\n  template:\n    metadata:\n      labels:\n        app: web\n" +
		"    spec:\n      containers:\n      - name: web\n        image: nginx:2\n"
	for _, tt := range []struct {
		name, method, path, ctype, body string
		code                            int
		object                          string
	}{
		{"create", http.MethodPost, cms, js, cm("1"), http.StatusCreated, cms + "/c"},
		{"update", http.MethodPut, cms + "/c", js, cm("2"), http.StatusOK, cms + "/c"},
		{"no-op update", http.MethodPut, cms + "/c", js, cm("2"), http.StatusOK, cms + "/c"},
		{"merge patch", http.MethodPatch, cms + "/c", "application/merge-patch+json", `{"data":{"b":"3"}}`, http.StatusOK, cms + "/c"},
		{"create with defaults", http.MethodPost, deps, js, deployment, http.StatusCreated, deps + "/web"},
		{"strategic patch", http.MethodPatch, deps + "/web", "application/strategic-merge-patch+json",
			`{"spec":{"template":{"spec":{"containers":[{"name":"web","resources":{"limits":{"cpu":"1.5"}}}]}}}}`, http.StatusOK, deps + "/web"},
		{"apply", http.MethodPatch, deps + "/web?fieldManager=tool&force=true", "application/apply-patch+yaml", applied, http.StatusOK, deps + "/web"},
		{"apply that creates", http.MethodPatch, deps + "/api?fieldManager=tool", "application/apply-patch+yaml",
			"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: api\nspec:\n  selector:\n    matchLabels:\n      app: api\n" +
				"  template:\n    metadata:\n      labels:\n        app: api\n    spec:\n      containers:\n      - name: api\n        image: nginx\n",
			http.StatusCreated, deps + "/api"},
		{"microsecond times", http.MethodPost, leases, js, `{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"l"},
 "spec":{"holderIdentity":"a","leaseDurationSeconds":15,"acquireTime":"2026-11-27T06:00:00.123456Z","renewTime":"2026-11-27T06:00:01.654321Z"}}`,
			http.StatusCreated, leases + "/l"},
		{"allocated fields", http.MethodPost, svcs, js, `{"apiVersion":"v1","kind":"Service","metadata":{"name":"s"},
 "spec":{"selector":{"app":"web"},"ports":[{"port":80,"targetPort":"http"}]}}`, http.StatusCreated, svcs + "/s"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, answer := ts.send(t, tt.method, tt.path, tt.ctype, []byte(tt.body), "Accept", acceptProtobuf)
			if code != tt.code {
				t.Fatalf("%s %s: %d, want %d: %s", tt.method, tt.path, code, tt.code, answer)
			}
			code, got := ts.send(t, http.MethodGet, tt.object, "", nil, "Accept", acceptProtobuf)
			if code != http.StatusOK {
				t.Fatalf("GET %s: %d: %s", tt.object, code, got)
			}
			if !bytes.Equal(answer, got) {
				t.Errorf("the write answered\n%q\nGET answers\n%q", answer, got)
			}
		})
	}
}
