package apiserver

import (
	"testing"
)

// TestMethodNotAllowed: a method a path does not serve is answered as
// kube-apiserver answers it. Built-in resources are served by go-restful
// there, whose 405 becomes NewGenericServerResponse's Status: no verb in
// the message, empty details. Custom resources are served by the
// apiextensions handler, which answers NewMethodNotSupported: the verb and
// the resource in the message and the details.
func TestMethodNotAllowed(t *testing.T) {
	ts := newTestServer(t)
	createWidgetsCRD(t, ts)
	const generic = `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"the server does not allow this method on the requested resource","reason":"MethodNotAllowed","details":{},"code":405}` + "\n"
	unsupported := func(verb string) string {
		return `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"` + verb +
			` is not supported on resources of kind \"widgets.example.com\"","reason":"MethodNotAllowed","details":{"group":"example.com","kind":"widgets"},"code":405}` + "\n"
	}
	const widgetsPath = "/apis/example.com/v1/namespaces/default/widgets"
	for _, tt := range []struct {
		method, path, want string
	}{
		{"DELETE", "/api/v1/namespaces", generic},
		{"POST", cmPath + "/x", generic},
		{"PUT", cmPath, generic},
		{"PATCH", cmPath, generic},
		{"TRACE", cmPath, generic},
		{"DELETE", "/api/v1/namespaces/default/pods/x/status", generic},
		{"POST", "/api/v1/namespaces/default/pods/x/status", generic},
		{"POST", "/api/v1/componentstatuses", generic},
		{"DELETE", widgetsPath + "/x/status", unsupported("delete")},
		{"POST", widgetsPath + "/x/status", unsupported("create")},
		// RequestInfoFactory gives methods other than GET, HEAD, POST,
		// PUT, PATCH and DELETE the verb "": kube-apiserver's message
		// begins with a space.
		{"TRACE", widgetsPath, unsupported("")},
	} {
		code, body := ts.send(t, tt.method, tt.path, "application/json", []byte("{}"))
		if code != 405 || string(body) != tt.want {
			t.Errorf("%s %s: %d\n%s\nwant 405\n%s", tt.method, tt.path, code, body, tt.want)
		}
	}
	// The apiextensions handler's other refusals of custom resource paths.
	const notFound = "404 page not found\n" // net/http's, from kube-apiserver's last delegate
	const noName = `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"name must be provided","reason":"BadRequest","code":400}` + "\n"
	const noSubresource = `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"widgets.example.com \"x\" not found","reason":"NotFound","details":{"name":"x","group":"example.com","kind":"widgets"},"code":404}` + "\n"
	for _, tt := range []struct {
		method, path string
		code         int
		want         string
	}{
		{"PUT", widgetsPath, 400, noName},
		{"PATCH", widgetsPath, 400, noName},
		{"DELETE", "/apis/example.com/v1/widgets", 404, notFound},
		{"POST", "/apis/example.com/v1/widgets", 404, notFound},
		{"GET", widgetsPath + "/x/log", 404, noSubresource},
	} {
		code, body := ts.send(t, tt.method, tt.path, "application/merge-patch+json", []byte("{}"))
		if code != tt.code || string(body) != tt.want {
			t.Errorf("%s %s: %d\n%s\nwant %d\n%s", tt.method, tt.path, code, body, tt.code, tt.want)
		}
	}
}
