package apiserver

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/stratadev/strata/registry"
	"github.com/stratadev/strata/storage"
)

// BenchmarkListEncoding encodes a list of 1,000 ConfigMaps (512-byte
// payloads, as strata-bench's) the ways the server can: JSON and protobuf
// from their item caches, by object and resourceVersion (a list read from
// etcd) and from the watch cache's memos (the steady state), protobuf with an empty cache
// (every object converted to its typed form, as after a change of every
// object), and apimachinery's protobuf serializer over a typed list built
// from the objects (what encoding without the cache would cost).
func BenchmarkListEncoding(b *testing.B) {
	var kind *registry.Kind
	for _, k := range registry.Builtin() {
		if k.Resource == "configmaps" {
			kind = k
		}
	}
	payload := strings.Repeat("p", 512)
	items := make([]unstructured.Unstructured, 1000)
	for i := range items {
		items[i].Object = map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": fmt.Sprintf("list-%05d", i), "namespace": "bench",
				"resourceVersion": fmt.Sprint(100 + i), "uid": fmt.Sprintf("uid-%d", i),
				"creationTimestamp": "2026-11-25T19:00:00Z", "labels": map[string]any{"app": "strata-bench"}},
			"data": map[string]any{"counter": "0", "payload": payload}}
	}
	meta := metav1.ListMeta{ResourceVersion: "2000"}
	discard := func([]byte) error { return nil }
	buf := make([]byte, 0, listChunkBytes)
	jsonCache, protoCache := newItemCache(itemCacheBytes, false), newProtobufCache(itemCacheBytes, kind)
	memos := make([]*storage.Memo, len(items))
	for i := range memos {
		memos[i] = new(storage.Memo)
	}
	writeJSONList := func(b *testing.B, c *itemCache, memos []*storage.Memo) {
		data, err := c.encodeItems(items, memos)
		if err != nil {
			b.Fatal(err)
		}
		body := &listBody{Kind: "ConfigMapList", APIVersion: "v1", Metadata: meta, Items: data}
		if err := body.writeTo(discard, buf[:0]); err != nil {
			b.Fatal(err)
		}
	}
	writeProtobufList := func(b *testing.B, c *itemCache, memos []*storage.Memo) {
		data, err := c.encodeItems(items, memos)
		if err != nil {
			b.Fatal(err)
		}
		body := &protobufList{gvk: kind.ListGVK(), meta: meta, items: data}
		if err := body.writeTo(discard, buf[:0]); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("json-cached", func(b *testing.B) {
		for range b.N {
			writeJSONList(b, jsonCache, nil)
		}
	})
	b.Run("json-memo", func(b *testing.B) {
		for range b.N {
			writeJSONList(b, jsonCache, memos)
		}
	})
	b.Run("protobuf-cached", func(b *testing.B) {
		for range b.N {
			writeProtobufList(b, protoCache, nil)
		}
	})
	b.Run("protobuf-memo", func(b *testing.B) {
		for range b.N {
			writeProtobufList(b, protoCache, memos)
		}
	})
	b.Run("protobuf-uncached", func(b *testing.B) {
		for range b.N {
			writeProtobufList(b, newProtobufCache(itemCacheBytes, kind), nil)
		}
	})
	b.Run("apimachinery", func(b *testing.B) {
		for range b.N {
			list := &corev1.ConfigMapList{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMapList"}, ListMeta: meta,
				Items: make([]corev1.ConfigMap, len(items))}
			for i := range items {
				if err := runtime.DefaultUnstructuredConverter.FromUnstructured(items[i].Object, &list.Items[i]); err != nil {
					b.Fatal(err)
				}
			}
			if _, err := encodeProtobuf(list); err != nil {
				b.Fatal(err)
			}
		}
	})
}
