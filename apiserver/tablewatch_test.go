package apiserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestWatchTable: a watch asking for Tables (kubectl get -w) gets one Table
// per event with one row, and the column definitions in the first event
// only, as kube-apiserver's watch encoder sends them.
func TestWatchTable(t *testing.T) {
	ts := newTestServer(t)
	cms := ts.client.CoreV1().ConfigMaps("default")
	for _, name := range []string{"a", "b", "c"} {
		mustCreateConfigMap(t, cms, name, map[string]string{"k": name}, nil)
	}
	tests := []struct {
		name, query string
		// wantObject is the kind each row's object has ("" for none).
		wantObject string
	}{
		{"default", "", "PartialObjectMetadata"},
		{"includeObject=Object", "&includeObject=Object", "ConfigMap"},
		{"includeObject=None", "&includeObject=None", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := rawCall(t, ts, "GET", "/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=0&timeoutSeconds=1"+tc.query,
				map[string]string{"Accept": acceptTableJSON}, nil)
			if res.code != http.StatusOK || res.header.Get("Content-Type") != "application/json" {
				t.Fatalf("%d %q: %s", res.code, res.header.Get("Content-Type"), res.body)
			}
			lines := bytes.Split(bytes.TrimSpace(res.body), []byte("\n"))
			if len(lines) != 3 {
				t.Fatalf("%d events, want 3:\n%s", len(lines), res.body)
			}
			for i, line := range lines {
				var ev struct {
					Type   string
					Object json.RawMessage
				}
				var table metav1.Table
				var raw map[string]json.RawMessage
				if err := json.Unmarshal(line, &ev); err != nil {
					t.Fatal(err)
				}
				if err := json.Unmarshal(ev.Object, &table); err != nil {
					t.Fatal(err)
				}
				if err := json.Unmarshal(ev.Object, &raw); err != nil {
					t.Fatal(err)
				}
				wantColumns := i == 0
				if got := len(table.ColumnDefinitions) > 0; ev.Type != "ADDED" || table.Kind != "Table" || got != wantColumns {
					t.Errorf("event %d: %s %s with %d column definitions, want them: %v", i, ev.Type, table.Kind, len(table.ColumnDefinitions), wantColumns)
				}
				if !wantColumns && string(raw["columnDefinitions"]) != "null" {
					t.Errorf("event %d: columnDefinitions %s, want null", i, raw["columnDefinitions"])
				}
				if len(table.Rows) != 1 {
					t.Fatalf("event %d: %d rows", i, len(table.Rows))
				}
				row := table.Rows[0]
				if name := fmt.Sprint(row.Cells[0]); name != []string{"a", "b", "c"}[i] {
					t.Errorf("event %d: row %v", i, row.Cells)
				}
				var obj metav1.TypeMeta
				if len(row.Object.Raw) > 0 {
					_ = json.Unmarshal(row.Object.Raw, &obj)
				}
				if obj.Kind != tc.wantObject {
					t.Errorf("event %d: row object %s, want %q", i, row.Object.Raw, tc.wantObject)
				}
			}
		})
	}
}

// TestWatchTableCustom: the same for a custom resource, whose columns come
// from the CRD's additionalPrinterColumns.
func TestWatchTableCustom(t *testing.T) {
	ts := newTestServer(t)
	createWidgetsCRD(t, ts)
	for _, name := range []string{"a", "b"} {
		if _, err := widgets(ts).Create(context.Background(), widget(name, map[string]any{"size": int64(1)}), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	res := rawCall(t, ts, "GET", "/apis/example.com/v1/namespaces/default/widgets?watch=1&resourceVersion=0&timeoutSeconds=1",
		map[string]string{"Accept": acceptTableJSON}, nil)
	lines := bytes.Split(bytes.TrimSpace(res.body), []byte("\n"))
	if res.code != http.StatusOK || len(lines) != 2 {
		t.Fatalf("%d, %d events:\n%s", res.code, len(lines), res.body)
	}
	for i, line := range lines {
		var ev struct{ Object metav1.Table }
		if err := json.Unmarshal(line, &ev); err != nil {
			t.Fatal(err)
		}
		if got := len(ev.Object.ColumnDefinitions) > 0; got != (i == 0) || len(ev.Object.Rows) != 1 {
			t.Errorf("event %d: %d column definitions, %d rows", i, len(ev.Object.ColumnDefinitions), len(ev.Object.Rows))
		}
	}
}
