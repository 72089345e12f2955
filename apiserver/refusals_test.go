package apiserver

import (
	"encoding/json"
	"net/http"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestRefusals: requests kube-apiserver refuses are refused the same way,
// and change nothing: the namespaces its NamespaceLifecycle plugin keeps
// (403), a collection delete of namespaces and TRACE (405), and a
// resourceVersion in a body that is not one (400 naming the field, where
// kube-apiserver answers 500).
func TestRefusals(t *testing.T) {
	ts := newTestServer(t)
	if code, body := ts.send(t, http.MethodPost, cmPath, "application/json", []byte(`{"metadata":{"name":"y"}}`)); code != 201 {
		t.Fatalf("create: %d %s", code, body)
	}
	forbidden := func(ns string) statusWant {
		return statusWant{code: 403, reason: metav1.StatusReasonForbidden,
			message: `namespaces "` + ns + `" is forbidden: this namespace may not be deleted`,
			details: &metav1.StatusDetails{Name: ns, Kind: "namespaces"}}
	}
	notAllowed := statusWant{code: 405, reason: metav1.StatusReasonMethodNotAllowed,
		message: "the server does not allow this method on the requested resource", details: &metav1.StatusDetails{}}
	badRV := func(rv string) statusWant {
		return statusWant{code: 400, reason: metav1.StatusReasonBadRequest,
			message: `metadata.resourceVersion: Invalid value: "` + rv + `": strconv.ParseUint: parsing "` + rv + `": invalid syntax`}
	}
	for _, tt := range []struct {
		method, path, contentType, body string
		want                            statusWant
	}{
		{"DELETE", "/api/v1/namespaces/default", "", "", forbidden("default")},
		{"DELETE", "/api/v1/namespaces/kube-system", "", "", forbidden("kube-system")},
		{"DELETE", "/api/v1/namespaces/kube-public", "", "", forbidden("kube-public")},
		{"DELETE", "/api/v1/namespaces", "", "", notAllowed},
		{"TRACE", cmPath, "", "", notAllowed},
		{"PUT", cmPath + "/y", "application/json", `{"metadata":{"name":"y","resourceVersion":"abc"}}`, badRV("abc")},
		{"PUT", cmPath + "/y", "application/json", `{"metadata":{"name":"y","resourceVersion":"-3"}}`, badRV("-3")},
		{"PATCH", cmPath + "/y", "application/merge-patch+json", `{"metadata":{"resourceVersion":"abc"}}`, badRV("abc")},
	} {
		var body []byte
		if tt.body != "" {
			body = []byte(tt.body)
		}
		code, out := ts.send(t, tt.method, tt.path, tt.contentType, body)
		var st metav1.Status
		if err := json.Unmarshal(out, &st); err != nil || code != int(tt.want.code) {
			t.Errorf("%s %s: %d %s, want %d", tt.method, tt.path, code, out, tt.want.code)
			continue
		}
		checkStatus(t, st, tt.want)
	}
	for _, ns := range []string{"default", "kube-system", "kube-public"} {
		if phase := ts.getJSON(t, "/api/v1/namespaces/"+ns)["status"].(map[string]any)["phase"]; phase != "Active" {
			t.Errorf("namespace %s is %v after the refused delete", ns, phase)
		}
	}
	// kube-node-lease is not kept.
	if code, out := ts.send(t, http.MethodDelete, "/api/v1/namespaces/kube-node-lease", "", nil); code != 200 {
		t.Errorf("DELETE kube-node-lease: %d %s", code, out)
	}
}
