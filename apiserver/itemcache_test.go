package apiserver

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
)

// encodeOne is encodeItems of one object.
func encodeOne(t *testing.T, c *itemCache, obj *unstructured.Unstructured) []byte {
	t.Helper()
	out, err := c.encodeItems([]unstructured.Unstructured{*obj})
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
	got, err := c.encodeItems(items)
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
