package storage

import (
	"fmt"
	"testing"

	"go.etcd.io/etcd/api/v3/mvccpb"
)

// TestDecodeAllKeepsOrderAndErrors decodes enough objects to spread them
// over several goroutines: each result is its own key's, undecodable
// values included.
func TestDecodeAllKeepsOrderAndErrors(t *testing.T) {
	s := &Store{}
	var kvs []*mvccpb.KeyValue
	for i := range 5*decodeChunk + 7 {
		v := fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm-%d"}}`, i)
		if i%1000 == 999 {
			v = "{not json"
		}
		kvs = append(kvs, &mvccpb.KeyValue{Key: fmt.Appendf(nil, "/k/%d", i), Value: []byte(v), ModRevision: int64(i + 1)})
	}
	objs, errs := s.decodeAll(kvs)
	for i := range kvs {
		if i%1000 == 999 {
			if errs[i] == nil || objs[i] != nil {
				t.Fatalf("%d: got %v, %v; want an error", i, objs[i], errs[i])
			}
			continue
		}
		if errs[i] != nil {
			t.Fatalf("%d: %v", i, errs[i])
		}
		if got, want := objs[i].GetName(), fmt.Sprintf("cm-%d", i); got != want {
			t.Fatalf("%d: name %q, want %q", i, got, want)
		}
		if got, want := objs[i].GetResourceVersion(), fmt.Sprint(i+1); got != want {
			t.Fatalf("%d: resourceVersion %q, want %q", i, got, want)
		}
	}
}
