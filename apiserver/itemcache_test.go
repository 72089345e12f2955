package apiserver

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
)

func cacheObject(name, rv, value string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": name, "namespace": "ns", "resourceVersion": rv}, "data": map[string]any{"k": value}}}
}

// TestItemCache: an item is encoded once per revision, a new revision is
// encoded again, and the byte bound rotates generations without losing
// entries still in use.
func TestItemCache(t *testing.T) {
	c := newItemCache(200, false)
	first, err := c.encode(cacheObject("a", "1", "x"))
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"data":{"k":"x"},"metadata":{"name":"a","namespace":"ns","resourceVersion":"1"}}`
	if string(first) != want {
		t.Fatalf("item JSON %s, want %s", first, want)
	}
	// Same revision: the cached bytes, even if the map were different.
	again, _ := c.encode(cacheObject("a", "1", "changed"))
	if string(again) != want {
		t.Errorf("same revision re-encoded: %s", again)
	}
	next, _ := c.encode(cacheObject("a", "2", "y"))
	if string(next) != `{"data":{"k":"y"},"metadata":{"name":"a","namespace":"ns","resourceVersion":"2"}}` {
		t.Errorf("new revision: %s", next)
	}
	// Fill past the bound: "a" moves to the previous generation and comes
	// back on its next hit.
	for _, n := range []string{"b", "c", "d"} {
		if _, err := c.encode(cacheObject(n, "1", "z")); err != nil {
			t.Fatal(err)
		}
	}
	if c.bytes > 200 {
		t.Errorf("current generation holds %d bytes, bound 200", c.bytes)
	}
	if _, ok := c.get("ns/a", "2"); !ok {
		t.Error("an entry of the previous generation was lost")
	}
	if _, ok := c.current["ns/a"]; !ok {
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
	if string(deleted) == wantEvent {
		t.Error("a DELETED event took the MODIFIED event's bytes")
	}
}
