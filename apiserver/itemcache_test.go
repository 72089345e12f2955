package apiserver

import (
	"bytes"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/stratadev/strata/registry"
	"github.com/stratadev/strata/storage"
)

// encodeOne is encodeItems of one object.
func encodeOne(t *testing.T, c *itemCache, obj *unstructured.Unstructured) []byte {
	t.Helper()
	out, err := c.encodeItems([]unstructured.Unstructured{*obj}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return out[0]
}

func cacheObject(name, rv, value string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": name, "namespace": "ns", "resourceVersion": rv}, "data": map[string]any{"k": value}}}
}

// TestItemCache: an item is encoded once per revision, a new revision is
// encoded again, and the byte bound rotates generations without losing
// entries still in use.
func TestItemCache(t *testing.T) {
	c := newItemCache(200, false)
	first := encodeOne(t, c, cacheObject("a", "1", "x"))
	const want = `{"data":{"k":"x"},"metadata":{"name":"a","namespace":"ns","resourceVersion":"1"}}`
	if string(first) != want {
		t.Fatalf("item JSON %s, want %s", first, want)
	}
	// Same revision: the cached bytes, even if the map were different.
	again := encodeOne(t, c, cacheObject("a", "1", "changed"))
	if string(again) != want {
		t.Errorf("same revision re-encoded: %s", again)
	}
	next := encodeOne(t, c, cacheObject("a", "2", "y"))
	if string(next) != `{"data":{"k":"y"},"metadata":{"name":"a","namespace":"ns","resourceVersion":"2"}}` {
		t.Errorf("new revision: %s", next)
	}
	// Fill past the bound: "a" moves to the previous generation and comes
	// back on its next hit.
	for _, n := range []string{"b", "c", "d"} {
		encodeOne(t, c, cacheObject(n, "1", "z"))
	}
	if c.bytes > 200 {
		t.Errorf("current generation holds %d bytes, bound 200", c.bytes)
	}
	if _, ok := c.getLocked(itemKey{namespace: "ns", name: "a"}, "2"); !ok {
		t.Error("an entry of the previous generation was lost")
	}
	if _, ok := c.current[itemKey{namespace: "ns", name: "a"}]; !ok {
		t.Error("a hit in the previous generation did not move the entry back")
	}

	typed := newItemCache(1<<20, true)
	ev, err := typed.encodeEvent(watch.Modified, cacheObject("a", "3", "w"))
	if err != nil {
		t.Fatal(err)
	}
	const wantEvent = `{"type":"MODIFIED","object":{"apiVersion":"v1","data":{"k":"w"},"kind":"ConfigMap","metadata":{"name":"a","namespace":"ns","resourceVersion":"3"}}}`
	if string(ev) != wantEvent {
		t.Errorf("event JSON %s, want %s", ev, wantEvent)
	}
	deleted, _ := typed.encodeEvent(watch.Deleted, cacheObject("a", "3", "w"))
	// A list of several objects: hits and misses in one call, in order.
	items := []unstructured.Unstructured{*cacheObject("a", "2", "y"), *cacheObject("e", "1", "v"), *cacheObject("f", "", "u")}
	got, err := c.encodeItems(items, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{
		`{"data":{"k":"y"},"metadata":{"name":"a","namespace":"ns","resourceVersion":"2"}}`,
		`{"data":{"k":"v"},"metadata":{"name":"e","namespace":"ns","resourceVersion":"1"}}`,
		`{"data":{"k":"u"},"metadata":{"name":"f","namespace":"ns","resourceVersion":""}}`,
	} {
		if string(got[i]) != want {
			t.Errorf("item %d: %s, want %s", i, got[i], want)
		}
	}
	if _, ok := c.current[itemKey{namespace: "ns", name: "f"}]; ok {
		t.Error("an object without a resourceVersion was kept")
	}
	if string(deleted) == wantEvent {
		t.Error("a DELETED event took the MODIFIED event's bytes")
	}
}

// TestItemCacheMemos: an item with a memo takes its encoding from the
// memo's slot for the cache's form, filling it once, and is not kept by
// key; an item without one is kept by key as before; JSON and protobuf
// keep to their own slots.
func TestItemCacheMemos(t *testing.T) {
	var kind *registry.Kind
	for _, k := range registry.Builtin() {
		if k.Resource == "configmaps" {
			kind = k
		}
	}
	jsonCache, protoCache := newItemCache(1<<20, false), newProtobufCache(1<<20, kind)
	memo := new(storage.Memo)
	items := []unstructured.Unstructured{*cacheObject("a", "5", "x"), *cacheObject("b", "6", "y")}
	const wantA = `{"data":{"k":"x"},"metadata":{"name":"a","namespace":"ns","resourceVersion":"5"}}`
	got, err := jsonCache.encodeItems(items, []*storage.Memo{memo, nil})
	if err != nil {
		t.Fatal(err)
	}
	if string(got[0]) != wantA || string(memo.Load(memoJSON)) != wantA {
		t.Fatalf("item with a memo: %s, memo holds %s; want %s in both", got[0], memo.Load(memoJSON), wantA)
	}
	if _, ok := jsonCache.current[itemKey{namespace: "ns", name: "a"}]; ok {
		t.Error("an item with a memo was also kept by key")
	}
	if _, ok := jsonCache.current[itemKey{namespace: "ns", name: "b"}]; !ok {
		t.Error("an item without a memo was not kept by key")
	}
	// The memo's bytes are the item's: a second list does not encode it.
	memo.Store(memoJSON, []byte(`{"from":"memo"}`))
	if got, _ := jsonCache.encodeItems(items[:1], []*storage.Memo{memo}); string(got[0]) != `{"from":"memo"}` {
		t.Fatalf("second list encoded the item again: %s", got[0])
	}

	pb, err := protoCache.encodeItems(items[:1], []*storage.Memo{memo})
	if err != nil {
		t.Fatal(err)
	}
	want, err := kind.ProtobufMessage(items[0].Object)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(pb[0], want) || !bytes.Equal(memo.Load(memoProtobuf), want) {
		t.Fatalf("protobuf item %q, memo %q; want %q", pb[0], memo.Load(memoProtobuf), want)
	}
	if string(memo.Load(memoJSON)) != `{"from":"memo"}` {
		t.Fatal("the protobuf encoding overwrote the JSON slot")
	}
}
