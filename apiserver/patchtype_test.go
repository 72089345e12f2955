package apiserver

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestPatchUnsupportedMediaType: a PATCH whose Content-Type is no patch
// type is kube-apiserver's 415: for a built-in resource (and its scale
// subresource) go-restful's router's Status, for a custom resource the
// patch handler's, naming the patch types served.
func TestPatchUnsupportedMediaType(t *testing.T) {
	ts := newTestServer(t)
	createWidgetsCRD(t, ts)
	if _, err := widgets(ts).Create(context.Background(), widget("w", nil), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	mustCreateConfigMap(t, ts.client.CoreV1().ConfigMaps("default"), "x", nil, nil)
	custom := statusWant{code: 415, reason: metav1.StatusReasonUnsupportedMediaType,
		message: "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json, application/apply-patch+yaml"}
	tests := []struct {
		name, path, contentType string
		want                    statusWant
	}{
		{"built-in", cmPath + "/x", "text/plain", *unsupportedPatchType},
		{"built-in, no Content-Type", cmPath + "/x", "", *unsupportedPatchType},
		{"built-in scale", depPath + "/x/scale", "application/json", *unsupportedPatchType},
		{"custom", "/apis/example.com/v1/namespaces/default/widgets/w", "text/plain", custom},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			header := map[string]string{}
			if tc.contentType != "" {
				header["Content-Type"] = tc.contentType
			}
			res := rawCall(t, ts, "PATCH", tc.path, header, []byte(`{}`))
			if res.code != 415 {
				t.Fatalf("%d, want 415: %s", res.code, res.body)
			}
			checkStatus(t, parseStatusBody(t, res.body), tc.want)
		})
	}
}
