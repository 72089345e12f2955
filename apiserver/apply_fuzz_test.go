package apiserver

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// FuzzApplyBody sends server-side apply bodies to a ConfigMap, a
// Deployment and a custom resource: no body makes the server panic or
// answer 5xx, and every refusal is a Status with its code.
func FuzzApplyBody(f *testing.F) {
	ts := newTestServer(f)
	createWidgetsCRD(f, ts)
	handler := ts.api.Handler()
	seeds := []string{
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: f\ndata:\n  a: \"1\"\n",
		deploymentConfig(`"replicas":2,`, "nginx"),
		`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"f"},"spec":{"size":2,"ports":[{"port":53,"protocol":"TCP"}]}}`,
		`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"f"},"spec":{"ports":[{"port":53}]}}`,
		`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"f","managedFields":[{"manager":"x"}]}}`,
		`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"other"}}`,
		"apiVersion: v1\nkind: ConfigMap\ndata: {a: 1, a: 2}\n",
		"a: [", "null", "[]", "", "\x00", nested("[", "]", 2000),
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: f, resourceVersion: \"1\"}\n",
	}
	for i, s := range seeds {
		f.Add([]byte(s), uint8(i))
	}
	paths := []string{cmPath + "/f", depPath + "/f", "/apis/example.com/v1/namespaces/default/widgets/f"}
	queries := []string{"?fieldManager=fz", "?fieldManager=fz&force=true", "?fieldManager=fz&dryRun=All", "?fieldManager=fz&fieldValidation=Strict"}
	f.Fuzz(func(t *testing.T, body []byte, sel uint8) {
		path := paths[int(sel)%len(paths)] + queries[int(sel>>2)%len(queries)]
		req := httptest.NewRequest(http.MethodPatch, path, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/apply-patch+yaml")
		rec := httptest.NewRecorder()
		handler.ServeHTTP(rec, req)
		if rec.Code >= 500 {
			t.Fatalf("PATCH %s %q: %d\n%s", path, body, rec.Code, rec.Body.Bytes())
		}
		if rec.Code >= 400 {
			var st metav1.Status
			if err := json.Unmarshal(rec.Body.Bytes(), &st); err != nil || st.Kind != "Status" || int(st.Code) != rec.Code {
				t.Fatalf("PATCH %s %q: %d, the answer is not its Status (%v):\n%s", path, body, rec.Code, err, rec.Body.Bytes())
			}
		}
	})
}
