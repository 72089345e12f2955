package apiserver

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestJSONPatchLimits: JSON patches are bounded as kube-apiserver bounds
// them: at most 10,000 operations (413), and at most 3 MiB added by copy
// operations (422), so that a 2 KB patch of copies that double the object
// is refused at once instead of growing it to gigabytes; a refused patch
// changes nothing.
func TestJSONPatchLimits(t *testing.T) {
	ts := newTestServer(t)
	if code, body := ts.send(t, http.MethodPost, cmPath, "application/json",
		[]byte(`{"metadata":{"name":"x"},"data":{"a":"`+strings.Repeat("x", 1024)+`"}}`)); code != 201 {
		t.Fatalf("create: %d %s", code, body)
	}
	before := ts.getJSON(t, cmPath+"/x")
	ops := func(n int, op string) []byte {
		list := make([]string, n)
		for i := range list {
			list[i] = strings.ReplaceAll(op, "%d", fmt.Sprint(i))
		}
		return []byte("[" + strings.Join(list, ",") + "]")
	}
	for _, tt := range []struct {
		name  string
		patch []byte
		want  statusWant
	}{
		{"10,001 operations", ops(10001, `{"op":"test","path":"/metadata/name","value":"x"}`), statusWant{
			code: 413, reason: metav1.StatusReasonRequestEntityTooLarge,
			message: "Request entity too large: The allowed maximum operations in a JSON patch is 10000, got 10001"}},
		// Each copy doubles data: 2^40 KiB unbounded.
		{"copies that double the object", ops(40, `{"op":"copy","from":"/data","path":"/data/c%d"}`), statusWant{
			code: 422, reason: metav1.StatusReasonInvalid,
			prefix: `ConfigMap "x" is invalid: patch: Invalid value: Unable to complete the copy, the accumulated size increase of copy is `}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, body := ts.send(t, http.MethodPatch, cmPath+"/x", "application/json-patch+json", tt.patch)
			var st metav1.Status
			if err := json.Unmarshal(body, &st); err != nil || code != int(tt.want.code) {
				t.Fatalf("%d %s, want %d", code, body, tt.want.code)
			}
			checkStatus(t, st, tt.want)
			if !strings.HasSuffix(st.Message, ", exceeding the limit 3145728") && tt.want.code == 422 {
				t.Errorf("message %q does not name the limit", st.Message)
			}
		})
	}
	if after := ts.getJSON(t, cmPath+"/x"); jsonString(after) != jsonString(before) {
		t.Errorf("a refused patch changed the object:\n%s\nwas\n%s", jsonString(after), jsonString(before))
	}
	// 10,000 operations are served.
	if code, body := ts.send(t, http.MethodPatch, cmPath+"/x", "application/json-patch+json",
		ops(10000, `{"op":"test","path":"/metadata/name","value":"x"}`)); code != 200 {
		t.Errorf("10,000 operations: %d %s", code, body)
	}
}
