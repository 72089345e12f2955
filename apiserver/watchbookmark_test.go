package apiserver

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"reflect"
	"strconv"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/metadata"
	api "k8s.io/kubernetes/pkg/apis/core"
	"k8s.io/kubernetes/pkg/printers"
	printersinternal "k8s.io/kubernetes/pkg/printers/internalversion"
)

// watchListQuery asks for a watch-list: the initial state, then the
// bookmark that ends it (annotated k8s.io/initial-events-end).
const watchListQuery = "?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&timeoutSeconds=1"

// TestWatchBookmarkTransformed: a watch asking for PartialObjectMetadata or
// Table gets its BOOKMARK events in that form too, as kube-apiserver's watch
// encoder transforms every object of the stream: a PartialObjectMetadata
// carrying the resourceVersion (and the initial-events-end annotation), or a
// Table of one row printed from the bookmark's empty object.
func TestWatchBookmarkTransformed(t *testing.T) {
	ts := newTestServer(t)
	mustCreateConfigMap(t, ts.client.CoreV1().ConfigMaps("default"), "a", map[string]string{"k": "v"}, nil)
	tests := []struct {
		name, accept, query string
		// want is kube-apiserver's bookmark object at resourceVersion rv.
		want func(rv string) any
	}{
		{"PartialObjectMetadata", "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1", "",
			func(rv string) any { return bookmarkPartial(rv) }},
		{"Table", acceptTableJSON, "",
			func(rv string) any { return bookmarkTable(t, rv, bookmarkPartial(rv)) }},
		{"Table includeObject=None", acceptTableJSON, "&includeObject=None",
			// the bookmark that ends the initial events keeps its metadata
			func(rv string) any { return bookmarkTable(t, rv, bookmarkPartial(rv)) }},
		{"Table includeObject=Object", acceptTableJSON, "&includeObject=Object",
			func(rv string) any {
				return bookmarkTable(t, rv, map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
					"metadata": map[string]any{"resourceVersion": rv,
						"annotations": map[string]any{metav1.InitialEventsAnnotationKey: "true"}}})
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := rawCall(t, ts, "GET", "/api/v1/namespaces/default/configmaps"+watchListQuery+tc.query,
				map[string]string{"Accept": tc.accept}, nil)
			if res.code != http.StatusOK {
				t.Fatalf("%d: %s", res.code, res.body)
			}
			lines := bytes.Split(bytes.TrimSpace(res.body), []byte("\n"))
			// ADDED, the initial-events-end bookmark, then maybe the one
			// sent before the timeout
			if len(lines) < 2 {
				t.Fatalf("%d events, want ADDED and BOOKMARK:\n%s", len(lines), res.body)
			}
			var ev struct {
				Type   string
				Object json.RawMessage
			}
			if err := json.Unmarshal(lines[1], &ev); err != nil {
				t.Fatal(err)
			}
			var rv struct {
				Metadata struct{ ResourceVersion string }
			}
			if err := json.Unmarshal(ev.Object, &rv); err != nil {
				t.Fatal(err)
			}
			if _, err := strconv.ParseInt(rv.Metadata.ResourceVersion, 10, 64); ev.Type != "BOOKMARK" || err != nil {
				t.Fatalf("second event %s with resourceVersion %q, want a BOOKMARK: %s", ev.Type, rv.Metadata.ResourceVersion, lines[1])
			}
			want, err := json.Marshal(tc.want(rv.Metadata.ResourceVersion))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(ev.Object, want) {
				t.Errorf("bookmark object\n got %s\nwant %s", ev.Object, want)
			}
		})
	}
}

// bookmarkPartial is the initial-events-end bookmark as
// PartialObjectMetadata, as kube-apiserver's asPartialObjectMetadata makes it.
func bookmarkPartial(rv string) *metav1.PartialObjectMetadata {
	m := &metav1.ObjectMeta{ResourceVersion: rv, Annotations: map[string]string{metav1.InitialEventsAnnotationKey: "true"}}
	p := meta.AsPartialObjectMetadata(m)
	p.SetGroupVersionKind(metav1.SchemeGroupVersion.WithKind("PartialObjectMetadata"))
	return p
}

// bookmarkTable is the Table kube-apiserver's asTable makes of a ConfigMap
// bookmark after the first event (no column definitions), its row carrying
// rowObject.
func bookmarkTable(t *testing.T, rv string, rowObject any) *metav1.Table {
	t.Helper()
	gen := printers.NewTableGenerator().With(printersinternal.AddHandlers)
	table, err := gen.GenerateTable(&api.ConfigMap{ObjectMeta: metav1.ObjectMeta{ResourceVersion: rv}},
		printers.GenerateOptions{Wide: true, NoHeaders: true})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(rowObject)
	if err != nil {
		t.Fatal(err)
	}
	table.Rows[0].Object = runtime.RawExtension{Raw: raw}
	table.APIVersion, table.Kind = "meta.k8s.io/v1", "Table"
	return table
}

// TestMetadataWatchBookmark: client-go's metadata client, which asks for
// PartialObjectMetadata in protobuf, decodes the bookmarks of its watch
// (an informer meeting the full kind there fails and relists).
func TestMetadataWatchBookmark(t *testing.T) {
	ts := newTestServer(t)
	mustCreateConfigMap(t, ts.client.CoreV1().ConfigMaps("default"), "a", nil, nil)
	client := metadata.NewForConfigOrDie(ts.config).Resource(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	send, timeout := true, int64(1)
	w, err := client.Namespace("default").Watch(ctx, metav1.ListOptions{SendInitialEvents: &send,
		ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan, AllowWatchBookmarks: true, TimeoutSeconds: &timeout})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	// ADDED, the initial-events-end bookmark, then maybe the bookmark
	// sent before the timeout; a bookmark that does not decode is an ERROR.
	var types []watch.EventType
	for ev := range w.ResultChan() {
		types = append(types, ev.Type)
		if ev.Type != watch.Bookmark {
			continue
		}
		p, ok := ev.Object.(*metav1.PartialObjectMetadata)
		if !ok {
			t.Fatalf("bookmark object %T, want *PartialObjectMetadata: %v", ev.Object, ev.Object)
		}
		end := p.Annotations[metav1.InitialEventsAnnotationKey] == "true"
		if p.ResourceVersion == "" || end != (len(types) == 2) {
			t.Errorf("bookmark %d: metadata %+v, want a resourceVersion and the initial-events-end annotation on the first", len(types), p.ObjectMeta)
		}
	}
	if len(types) < 2 || types[0] != watch.Added || types[1] != watch.Bookmark {
		t.Errorf("events %v, want [ADDED BOOKMARK ...]", types)
	}
	for _, typ := range types[min(2, len(types)):] {
		if typ != watch.Bookmark {
			t.Errorf("events %v, want only bookmarks after the first", types)
		}
	}
}

// TestWatchListWithoutBookmarks: sendInitialEvents=true without
// allowWatchBookmarks is served, as kube-apiserver v1.37 serves it (its
// ListOptions validation asks only for resourceVersionMatch=NotOlderThan):
// the initial state, and no initial-events-end bookmark.
func TestWatchListWithoutBookmarks(t *testing.T) {
	ts := newTestServer(t)
	mustCreateConfigMap(t, ts.client.CoreV1().ConfigMaps("default"), "a", nil, nil)
	res := rawCall(t, ts, "GET", "/api/v1/namespaces/default/configmaps?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&timeoutSeconds=1",
		map[string]string{"Accept": "application/json"}, nil)
	if res.code != http.StatusOK {
		t.Fatalf("%d: %s", res.code, res.body)
	}
	var types []string
	for _, line := range bytes.Split(bytes.TrimSpace(res.body), []byte("\n")) {
		var ev struct{ Type string }
		if err := json.Unmarshal(line, &ev); err != nil {
			t.Fatal(err)
		}
		types = append(types, ev.Type)
	}
	if !reflect.DeepEqual(types, []string{"ADDED"}) {
		t.Errorf("events %v, want [ADDED]:\n%s", types, res.body)
	}
}
