package storage

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
)

// Benchmarks run against the package's embedded etcd (loopback,
// unsafe-no-fsync), with the raw clientv3 ceiling measured in the same run.
// Results and commands: bench/results/2026-11-23-storage.md.

var benchSeq atomic.Int64

// runConcurrent calls op n times from c goroutines.
func runConcurrent(b *testing.B, c int, op func(i int64) error) {
	b.ResetTimer()
	runConcurrentN(b, b.N, c, op)
}

// runConcurrentN runs op for i = 1..n from c goroutines.
func runConcurrentN(b *testing.B, n, c int, op func(i int64) error) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for g := 0; g < c; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := next.Add(1); i <= int64(n); i = next.Add(1) {
				if err := op(i); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
}

// BenchmarkCreate compares Store.Create with raw clientv3 puts of the same
// bytes, at concurrency 1 and 16.
func BenchmarkCreate(b *testing.B) {
	s := newTestStore(b)
	obj := widget("bench", "x", map[string]string{"app": "bench"})
	data, _ := encode(obj, "")
	for _, c := range []int{1, 16} {
		b.Run(fmt.Sprintf("store/c=%d", c), func(b *testing.B) {
			run := benchSeq.Add(1)
			runConcurrent(b, c, func(i int64) error {
				o := obj.DeepCopy()
				o.SetName(fmt.Sprintf("s%d-%d", run, i))
				_, err := s.Create(context.Background(), o)
				return err
			})
		})
		b.Run(fmt.Sprintf("raw-put/c=%d", c), func(b *testing.B) {
			run := benchSeq.Add(1)
			runConcurrent(b, c, func(i int64) error {
				_, err := testClient.Put(context.Background(), fmt.Sprintf("/bench/raw/%d-%d", run, i), string(data))
				return err
			})
		})
		// The same puts into the store's watched prefix: the ceiling with
		// the watch cache's work (etcd sending events, decoding) included.
		b.Run(fmt.Sprintf("raw-put-watched/c=%d", c), func(b *testing.B) {
			run := benchSeq.Add(1)
			runConcurrent(b, c, func(i int64) error {
				_, err := testClient.Put(context.Background(), fmt.Sprintf("%sbench/r%d-%d", s.prefix, run, i), string(data))
				return err
			})
		})
	}
}

// benchStore returns a store holding n objects in namespace "bench", with
// its cache caught up.
func benchStore(b *testing.B, n int) *Store {
	s := newTestStore(b)
	var last atomic.Int64
	runConcurrentN(b, n, 16, func(i int64) error {
		out, err := s.Create(context.Background(), widget("bench", fmt.Sprintf("o%05d", i), map[string]string{"app": "bench"}))
		if err == nil {
			last.Store(max(last.Load(), rvOf(b, out)))
		}
		return err
	})
	if err := s.cache.waitRevision(context.Background(), last.Load(), 0); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	return s
}

// BenchmarkGet compares an RV=0 get from the watch cache with a quorum get.
func BenchmarkGet(b *testing.B) {
	s := benchStore(b, 1)
	for _, rv := range []string{"0", ""} {
		name := map[string]string{"0": "cache-rv0", "": "quorum"}[rv]
		b.Run(name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if _, err := s.Get(context.Background(), "bench", "o00001", GetOptions{ResourceVersion: rv}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkList compares an RV=0 list of 500 objects from the watch cache
// with a quorum list.
func BenchmarkList(b *testing.B) {
	s := benchStore(b, 500)
	for _, rv := range []string{"0", ""} {
		name := map[string]string{"0": "cache-rv0", "": "quorum"}[rv]
		b.Run(name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				l, err := s.List(context.Background(), "bench", ListOptions{ResourceVersion: rv})
				if err != nil || len(l.Items) != 500 {
					b.Fatal(err, len(l.Items))
				}
			}
		})
	}
}

// BenchmarkPaginatedList reads 10,000 objects in pages of 500, through the
// store and as the raw etcd ranges the same pages need.
func BenchmarkPaginatedList(b *testing.B) {
	s := benchStore(b, 10000)
	b.Run("store", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			opts, total := ListOptions{Limit: 500}, 0
			for {
				l, err := s.List(context.Background(), "bench", opts)
				if err != nil {
					b.Fatal(err)
				}
				total += len(l.Items)
				if l.GetContinue() == "" {
					break
				}
				opts = ListOptions{Limit: 500, Continue: l.GetContinue()}
			}
			if total != 10000 {
				b.Fatalf("listed %d", total)
			}
		}
	})
	b.Run("raw-ranges", func(b *testing.B) {
		prefix := s.prefix + "bench/"
		end := clientv3.GetPrefixRangeEnd(prefix)
		for i := 0; i < b.N; i++ {
			key, rev, total := prefix, int64(0), 0
			for {
				opts := []clientv3.OpOption{clientv3.WithRange(end), clientv3.WithLimit(500)}
				if rev > 0 {
					opts = append(opts, clientv3.WithRev(rev))
				}
				resp, err := testClient.Get(context.Background(), key, opts...)
				if err != nil {
					b.Fatal(err)
				}
				rev, total = resp.Header.Revision, total+len(resp.Kvs)
				if !resp.More {
					break
				}
				key = string(resp.Kvs[len(resp.Kvs)-1].Key) + "\x00"
			}
			if total != 10000 {
				b.Fatalf("ranged %d", total)
			}
		}
	})
}

// BenchmarkWatchFanout: 1,000 watchers of one resource; each iteration is
// one update delivered to all of them. Reports deliveries/s and the
// write-to-delivery latency p50/p99.
func BenchmarkWatchFanout(b *testing.B) {
	const watchers = 1000
	s := benchStore(b, 1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	lat := make(chan time.Duration, watchers)
	var sentAt atomic.Int64
	for i := 0; i < watchers; i++ {
		w, err := s.Watch(ctx, "bench", ListOptions{ResourceVersion: "0"})
		if err != nil {
			b.Fatal(err)
		}
		<-w.ResultChan() // the initial ADDED
		go func(w watch.Interface) {
			for range w.ResultChan() {
				lat <- time.Duration(time.Now().UnixNano() - sentAt.Load())
			}
		}(w)
	}
	all := make([]time.Duration, 0, b.N*watchers)
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		sentAt.Store(time.Now().UnixNano())
		if _, err := s.GuaranteedUpdate(ctx, "bench", "o00001", nil, func(c *unstructured.Unstructured) (*unstructured.Unstructured, error) {
			return c, unstructured.SetNestedField(c.Object, int64(i), "spec", "size")
		}); err != nil {
			b.Fatal(err)
		}
		for j := 0; j < watchers; j++ {
			all = append(all, <-lat)
		}
	}
	elapsed := time.Since(start)
	b.StopTimer()
	slices.Sort(all)
	b.ReportMetric(float64(len(all))/elapsed.Seconds(), "events/s")
	b.ReportMetric(float64(all[len(all)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(all[len(all)*99/100].Microseconds()), "p99-µs")
}

// BenchmarkCacheWrite is the watch cache's share of one write in a
// resource holding n objects: an ADDED event for a key in the middle of
// the key order, then its DELETED event. The time per write should not
// grow with n (the keys are kept in a B-tree, not a sorted slice that
// every insert shifts).
func BenchmarkCacheWrite(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 100_000} {
		b.Run(fmt.Sprintf("objects=%d", n), func(b *testing.B) {
			c := newWatchCache(&Store{cfg: withDefaults(Config{})})
			obj := &unstructured.Unstructured{Object: map[string]any{"kind": "ConfigMap"}}
			event := func(typ mvccpb.Event_EventType, key string, rev int64) decoded {
				return decoded{ev: &clientv3.Event{Type: typ, Kv: &mvccpb.KeyValue{Key: []byte(key), ModRevision: rev}}, obj: obj}
			}
			for i := range n {
				c.applyLocked(event(clientv3.EventTypePut, fmt.Sprintf("/registry/configmaps/ns/cm-%07d", 2*i), int64(i+1)))
			}
			b.ResetTimer()
			for i := range b.N {
				key := fmt.Sprintf("/registry/configmaps/ns/cm-%07d", 2*(i%n)+1)
				rev := int64(n + 2*i)
				c.recordLocked(c.applyLocked(event(clientv3.EventTypePut, key, rev)))
				c.recordLocked(c.applyLocked(event(clientv3.EventTypeDelete, key, rev+1)))
			}
		})
	}
}

// BenchmarkCacheList is the watch cache's walk for a list of one
// namespace's 1,000 objects, in a resource of 20 such namespaces: the
// page of items and memos that the API layer then encodes.
func BenchmarkCacheList(b *testing.B) {
	c := newWatchCache(&Store{cfg: withDefaults(Config{}), prefix: "/registry/configmaps/"})
	for ns := range 20 {
		for i := range 1000 {
			key := fmt.Sprintf("/registry/configmaps/ns-%02d/cm-%05d", ns, i)
			c.applyLocked(decoded{ev: &clientv3.Event{Type: clientv3.EventTypePut, Kv: &mvccpb.KeyValue{Key: []byte(key), ModRevision: int64(ns*1000 + i + 1)}},
				obj: &unstructured.Unstructured{Object: map[string]any{"kind": "ConfigMap"}}})
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		if pg := c.listLocked("/registry/configmaps/ns-07/", listPlan{}); len(pg.items) != 1000 || len(pg.memos) != 1000 {
			b.Fatalf("%d items, %d memos, want 1,000 of each", len(pg.items), len(pg.memos))
		}
	}
}

// BenchmarkCacheDecode is the watch cache's decoding of one event's object
// (a 1 KiB ConfigMap as the API server stores it): decoding alone, and with
// the managed fields' sets shared (sharefields.go), what the cache does.
func BenchmarkCacheDecode(b *testing.B) {
	value := []byte(`{"apiVersion":"v1","data":{"data":"` + strings.Repeat("x", 1024) + `"},"kind":"ConfigMap",` +
		`"metadata":{"creationTimestamp":"2026-11-26T06:05:25Z","managedFields":[{"apiVersion":"v1","fieldsType":"FieldsV1",` +
		`"fieldsV1":{"f:data":{".":{},"f:data":{}}},"manager":"Go-http-client","operation":"Update","time":"2026-11-26T06:05:25Z"}],` +
		`"name":"fp-00001","namespace":"footprint","uid":"092aed50-69b1-4aa0-a033-18cad235eed0"}}`)
	for _, share := range []bool{false, true} {
		b.Run(fmt.Sprintf("share=%t", share), func(b *testing.B) {
			var tab fieldsTable
			b.ReportAllocs()
			for range b.N {
				obj, err := decode(value, 5, nil)
				if err != nil {
					b.Fatal(err)
				}
				if share {
					tab.share(obj.Object)
				}
			}
		})
	}
}

// BenchmarkCacheLoad is a watch cache's first load of 20,000 ConfigMaps of
// 1 KiB (as the API server stores them) from the package's etcd: what a
// start on them waits for.
func BenchmarkCacheLoad(b *testing.B) {
	s := newTestStore(b)
	ctx := context.Background()
	const n, batch = 20000, 100
	for from := 0; from < n; from += batch {
		ops := make([]clientv3.Op, 0, batch)
		for i := from; i < from+batch; i++ {
			name := fmt.Sprintf("cm-%05d", i)
			value := `{"apiVersion":"v1","data":{"data":"` + strings.Repeat("x", 1024) + `"},"kind":"ConfigMap",` +
				`"metadata":{"creationTimestamp":"2026-11-26T06:05:25Z","managedFields":[{"apiVersion":"v1","fieldsType":"FieldsV1",` +
				`"fieldsV1":{"f:data":{".":{},"f:data":{}}},"manager":"Go-http-client","operation":"Update","time":"2026-11-26T06:05:25Z"}],` +
				`"name":"` + name + `","namespace":"load","uid":"092aed50-69b1-4aa0-a033-18cad235eed0"}}`
			ops = append(ops, clientv3.OpPut(s.prefix+"load/"+name, value))
		}
		if _, err := s.client.Txn(ctx).Then(ops...).Commit(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		st, _, err := newWatchCache(s).load(ctx)
		if err != nil || len(st.objs) != n {
			b.Fatalf("%d objects, %v; want %d", len(st.objs), err, n)
		}
	}
}
