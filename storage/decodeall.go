package storage

import (
	"runtime"
	"sync"

	"go.etcd.io/etcd/api/v3/mvccpb"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// decodeChunk is the fewest objects a decoding goroutine is given: below
// it, starting goroutines costs more than it saves (a goroutine costs about
// a microsecond, a ConfigMap's decode about ten). A relist page
// (relistPage) is split between two processors.
const decodeChunk = 128

// decodeAll decodes kvs (decodeCached of each), spread over the processors
// when there are many: decoding a watch cache's first list on one core
// would make a loaded server's start-up wait for it. The i-th result is
// kvs[i]'s.
func (s *Store) decodeAll(kvs []*mvccpb.KeyValue) ([]*unstructured.Unstructured, []error) {
	objs := make([]*unstructured.Unstructured, len(kvs))
	errs := make([]error, len(kvs))
	decode := func(from, to int) {
		for i := from; i < to; i++ {
			objs[i], errs[i] = s.decodeCached(kvs[i])
		}
	}
	workers := min(runtime.GOMAXPROCS(0), len(kvs)/decodeChunk)
	if workers <= 1 {
		decode(0, len(kvs))
		return objs, errs
	}
	per := (len(kvs) + workers - 1) / workers
	var wg sync.WaitGroup
	for from := 0; from < len(kvs); from += per {
		wg.Go(func() { decode(from, min(from+per, len(kvs))) })
	}
	wg.Wait()
	return objs, errs
}
