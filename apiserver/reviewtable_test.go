package apiserver

import (
	"encoding/json"
	"net/http"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestReviewNegotiation: kube-apiserver installs the reviews without a
// table convertor, so a review asked for only as a Table is 406 (the e2e
// spec "should return a 406 for a backend which does not implement
// metadata"), one that also takes JSON answers the review, and one asked
// for as PartialObjectMetadata answers that (201 each), as kube-apiserver
// v1.37 answers.
func TestReviewNegotiation(t *testing.T) {
	ts := newTestServer(t)
	const path = "/apis/authorization.k8s.io/v1/subjectaccessreviews"
	body := []byte(`{"spec":{"user":"alice","nonResourceAttributes":{"path":"/","verb":"get"}}}`)
	tests := []struct {
		name, accept string
		code         int
		kind         string // of the answer
	}{
		{"Table only", acceptTableJSON, http.StatusNotAcceptable, "Status"},
		{"Table, else JSON", acceptTableJSON + ",application/json", http.StatusCreated, "SubjectAccessReview"},
		{"PartialObjectMetadata", acceptPartialJSON, http.StatusCreated, "PartialObjectMetadata"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := rawCall(t, ts, "POST", path, map[string]string{"Accept": tc.accept, "Content-Type": "application/json"}, body)
			var tm metav1.TypeMeta
			if err := json.Unmarshal(res.body, &tm); err != nil {
				t.Fatal(err)
			}
			if res.code != tc.code || tm.Kind != tc.kind {
				t.Fatalf("%d %s, want %d %s: %s", res.code, tm.Kind, tc.code, tc.kind, res.body)
			}
			if tc.code == http.StatusNotAcceptable {
				checkStatus(t, parseStatusBody(t, res.body), statusWant{code: 406, reason: metav1.StatusReasonNotAcceptable,
					message: "only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf"})
			}
		})
	}
}
