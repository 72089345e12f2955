package apiserver

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"reflect"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/metadata"
)

const acceptPartialJSON = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"

// TestWriteAnswerAsPartialObjectMetadata: POST, PUT, PATCH, apply and a
// DELETE that leaves the object (held by a finalizer) answer with the
// PartialObjectMetadata a GET of the written object then gives, as
// kube-apiserver transforms every verb's answer.
func TestWriteAnswerAsPartialObjectMetadata(t *testing.T) {
	ts := newTestServer(t)
	const path = "/api/v1/namespaces/default/configmaps"
	tests := []struct {
		name, method, path, contentType, body string
		code                                  int
	}{
		{"create", "POST", path, "application/json",
			`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","finalizers":["example.com/hold"]}}`, http.StatusCreated},
		{"update", "PUT", path + "/a", "application/json",
			`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","labels":{"l":"1"},"finalizers":["example.com/hold"]}}`, http.StatusOK},
		{"merge patch", "PATCH", path + "/a", "application/merge-patch+json",
			`{"metadata":{"labels":{"l":"2"}}}`, http.StatusOK},
		{"apply", "PATCH", path + "/a?fieldManager=m", "application/apply-patch+yaml",
			`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","annotations":{"a":"1"}}}`, http.StatusOK},
		{"delete held by a finalizer", "DELETE", path + "/a", "", "", http.StatusOK},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := rawCall(t, ts, tc.method, tc.path, map[string]string{"Accept": acceptPartialJSON, "Content-Type": tc.contentType}, []byte(tc.body))
			if res.code != tc.code {
				t.Fatalf("%d, want %d: %s", res.code, tc.code, res.body)
			}
			get := rawCall(t, ts, "GET", path+"/a", map[string]string{"Accept": acceptPartialJSON}, nil)
			if get.code != http.StatusOK || !bytes.Equal(res.body, get.body) {
				t.Errorf("answer\n%s\nwant what a GET answers (%d)\n%s", res.body, get.code, get.body)
			}
		})
	}
}

// TestWriteAnswerAsTable: a write asking for a Table gets the Table of the
// written object, with its column definitions and resourceVersion, and
// the write's status code.
func TestWriteAnswerAsTable(t *testing.T) {
	ts := newTestServer(t)
	res := rawCall(t, ts, "POST", "/api/v1/namespaces/default/configmaps?includeObject=None",
		map[string]string{"Accept": acceptTableJSON, "Content-Type": "application/json"},
		[]byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"},"data":{"k":"v"}}`))
	if res.code != http.StatusCreated {
		t.Fatalf("%d: %s", res.code, res.body)
	}
	var table metav1.Table
	if err := json.Unmarshal(res.body, &table); err != nil {
		t.Fatal(err)
	}
	cm, err := ts.client.CoreV1().ConfigMaps("default").Get(context.Background(), "a", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var columns []string
	for _, c := range table.ColumnDefinitions {
		columns = append(columns, c.Name)
	}
	if table.Kind != "Table" || table.APIVersion != "meta.k8s.io/v1" || table.ResourceVersion != cm.ResourceVersion ||
		!reflect.DeepEqual(columns, []string{"Name", "Data", "Age"}) || len(table.Rows) != 1 {
		t.Fatalf("answer %s, want a Table of one ConfigMap at resourceVersion %s", res.body, cm.ResourceVersion)
	}
	if row := table.Rows[0]; row.Cells[0] != "a" || row.Cells[1] != float64(1) || row.Object.Raw != nil {
		t.Errorf("row %v %s, want a's cells and no object", row.Cells, row.Object.Raw)
	}
}

// TestMetadataClientPatch: client-go's metadata client (protobuf, then
// JSON, of PartialObjectMetadata) decodes the answer of its PATCH, as the
// garbage collector's patches of owner references and finalizers need.
func TestMetadataClientPatch(t *testing.T) {
	ts := newTestServer(t)
	mustCreateConfigMap(t, ts.client.CoreV1().ConfigMaps("default"), "a", nil, nil)
	client := metadata.NewForConfigOrDie(ts.config).Resource(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}).Namespace("default")
	ctx := context.Background()
	got, err := client.Patch(ctx, "a", types.MergePatchType, []byte(`{"metadata":{"finalizers":["example.com/hold"]}}`), metav1.PatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want, err := client.Get(ctx, "a", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("patch answered\n%+v\nwant what a get answers\n%+v", got, want)
	}
	if got.Finalizers[0] != "example.com/hold" {
		t.Errorf("finalizers %v", got.Finalizers)
	}
}
