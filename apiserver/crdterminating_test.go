package apiserver

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
)

// TestCreateWhileCRDTerminating: while a CRD is being deleted, creating its
// custom resources (by POST, or by an apply that would create) is refused
// as apiextensions-apiserver's admission refuses it: 403 naming the object.
// The window is short in a real deletion, so the resource is marked
// terminating here directly.
func TestCreateWhileCRDTerminating(t *testing.T) {
	ts := newTestServer(t)
	createWidgetsCRD(t, ts)
	res, ok := ts.api.current().lookup(gvrWidgets)
	if !ok {
		t.Fatal("widgets are not served")
	}
	terminating := *res
	terminating.store = res.store.Serving(res.kind, true)
	forbidden := func(name string) string {
		return `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"widgets.example.com \"` + name +
			`\" is forbidden: create not allowed while custom resource definition is terminating","reason":"Forbidden","details":{"name":"` + name +
			`","group":"example.com","kind":"widgets"},"code":403}` + "\n"
	}
	const widgetsPath = "/apis/example.com/v1/namespaces/default/widgets"
	for _, tt := range []struct {
		method, path, verb, pathName, contentType, object string
	}{
		{"POST", widgetsPath, "create", "", "application/json", "posted"},
		{"PATCH", widgetsPath + "/applied?fieldManager=test", "patch", "applied", "application/apply-patch+yaml", "applied"},
	} {
		body := `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"` + tt.object + `"},"spec":{"size":1}}`
		req := httptest.NewRequest(tt.method, tt.path, strings.NewReader(body))
		req.Header.Set("Content-Type", tt.contentType)
		info := &genericapirequest.RequestInfo{IsResourceRequest: true, Verb: tt.verb, APIGroup: "example.com", APIVersion: "v1",
			Namespace: "default", Resource: "widgets", Name: tt.pathName}
		rec := httptest.NewRecorder()
		ts.api.dispatch(rec, req.WithContext(genericapirequest.WithRequestInfo(req.Context(), info)), &call{info: info, res: &terminating})
		want := forbidden(tt.object)
		if rec.Code != http.StatusForbidden || rec.Body.String() != want {
			t.Errorf("%s %s: %d\n%s\nwant 403\n%s", tt.method, tt.path, rec.Code, rec.Body.String(), want)
		}
	}
}
