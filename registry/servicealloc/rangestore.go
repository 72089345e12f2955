package servicealloc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/kubernetes/pkg/registry/core/service/allocator"
)

// etcdTimeout bounds one allocation's etcd requests (the upstream
// allocator interfaces take no context; upstream's storage waits without
// bound): long, because replicas racing for one key retry.
const etcdTimeout = 30 * time.Second

// errTaken stands for the bitmap's "not allocated" answer inside update.
var errTaken = errors.New("taken")

// etcdRange is an allocator.Interface whose state is a RangeAllocation (the
// range and its bitmap) under one etcd key, as upstream's
// allocator/storage.Etcd keeps it (that type needs k8s.io/apiserver's
// storage, which strata does not run; this one uses strata's etcd client).
// Every change is a compare-and-swap on the key's revision, so replicas
// sharing the etcd never hand out one item twice; a lost race restores the
// newer bitmap and tries again. The bitmap itself is upstream's
// AllocationBitmap.
type etcdRange struct {
	client    *clientv3.Client
	key       string
	rangeSpec string

	mu    sync.Mutex
	alloc *allocator.AllocationBitmap
	// rev is the mod revision of the key alloc mirrors (0: the key does
	// not exist); loaded says alloc mirrors etcd at all.
	rev    int64
	loaded bool
	// read is what Get last read (the value and its mod revision), which
	// CreateOrUpdate need not write again.
	read struct {
		rev   int64
		value []byte
	}
}

var _ allocator.Interface = (*etcdRange)(nil)

func newEtcdRange(client *clientv3.Client, key string, max int, rangeSpec string, offset int) *etcdRange {
	return &etcdRange{client: client, key: key, rangeSpec: rangeSpec,
		alloc: allocator.NewAllocationMapWithOffset(max, rangeSpec, offset)}
}

// Allocate takes offset; false when it is taken.
func (r *etcdRange) Allocate(offset int) (bool, error) {
	err := r.update(func() error {
		ok, err := r.alloc.Allocate(offset)
		if err == nil && !ok {
			return errTaken
		}
		return err
	})
	if errors.Is(err, errTaken) {
		return false, nil
	}
	return err == nil, err
}

// AllocateNext takes a free offset (at random, as upstream); false when
// the range is full.
func (r *etcdRange) AllocateNext() (int, bool, error) {
	var offset int
	err := r.update(func() error {
		var ok bool
		var err error
		offset, ok, err = r.alloc.AllocateNext()
		if err == nil && !ok {
			return errTaken
		}
		return err
	})
	if errors.Is(err, errTaken) {
		return 0, false, nil
	}
	return offset, err == nil, err
}

// Release frees offset.
func (r *etcdRange) Release(offset int) error {
	return r.update(func() error { return r.alloc.Release(offset) })
}

// ForEach, Has and Free answer from etcd's current state (a dry run asks
// Has whether a requested item is free), or from the last known state when
// etcd cannot be read.
func (r *etcdRange) ForEach(fn func(int)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	_ = r.refresh()
	r.alloc.ForEach(fn)
}

func (r *etcdRange) Has(offset int) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	_ = r.refresh()
	return r.alloc.Has(offset)
}

func (r *etcdRange) Free() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	_ = r.refresh()
	return r.alloc.Free()
}

// Destroy has nothing to stop: the etcd client is the server's.
func (r *etcdRange) Destroy() {}

// update applies fn to the bitmap and writes it if etcd still holds the
// state fn saw; otherwise it restores etcd's state and applies fn again.
func (r *etcdRange) update(fn func() error) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), etcdTimeout)
	defer cancel()
	// The bitmap from the last write is usually current: try it first.
	// A refusal from it (taken, full) is judged again on etcd's state.
	fresh := !r.loaded
	if fresh {
		if err := r.load(ctx); err != nil {
			return err
		}
	}
	for {
		if err := fn(); err != nil {
			if fresh {
				return err
			}
			if err := r.load(ctx); err != nil {
				return err
			}
			fresh = true
			continue
		}
		value, err := r.encode()
		if err != nil {
			return err
		}
		cmp := clientv3.Compare(clientv3.ModRevision(r.key), "=", r.rev)
		resp, err := r.client.Txn(ctx).If(cmp).Then(clientv3.OpPut(r.key, string(value))).
			Else(clientv3.OpGet(r.key)).Commit()
		if err != nil {
			// The bitmap holds fn's change, which etcd may not: read again
			// before the next change.
			r.loaded = false
			return fmt.Errorf("%s: writing the allocation: %w", r.key, err)
		}
		if resp.Succeeded {
			r.rev = resp.Header.Revision
			return nil
		}
		if err := r.restore(resp.Responses[0].GetResponseRange().Kvs); err != nil {
			return err
		}
		fresh = true
	}
}

// refresh reads etcd's state; r.mu is held.
func (r *etcdRange) refresh() error {
	ctx, cancel := context.WithTimeout(context.Background(), etcdTimeout)
	defer cancel()
	return r.load(ctx)
}

// load reads etcd's state into the bitmap; r.mu is held.
func (r *etcdRange) load(ctx context.Context) error {
	resp, err := r.client.Get(ctx, r.key)
	if err != nil {
		return fmt.Errorf("%s: reading the allocation: %w", r.key, err)
	}
	return r.restore(resp.Kvs)
}

// restore makes the bitmap etcd's (kvs is the key's Get result: empty
// when nothing is allocated yet).
func (r *etcdRange) restore(kvs []*mvccpb.KeyValue) error {
	if len(kvs) == 0 {
		if err := r.alloc.Restore(r.rangeSpec, nil); err != nil {
			return err
		}
		r.rev, r.loaded = 0, true
		return nil
	}
	var ra corev1.RangeAllocation
	if err := json.Unmarshal(kvs[0].Value, &ra); err != nil {
		return fmt.Errorf("%s: decoding the allocation: %w", r.key, err)
	}
	if ra.Range != r.rangeSpec {
		// The repair controllers (package bootstrap) rebuild the bitmap of
		// a changed range from the Services, before the server serves.
		return fmt.Errorf("%s: the stored allocations are of range %s, not %s (the repair at start moves them)",
			r.key, ra.Range, r.rangeSpec)
	}
	if err := r.alloc.Restore(ra.Range, ra.Data); err != nil {
		return fmt.Errorf("%s: %w", r.key, err)
	}
	r.rev, r.loaded = kvs[0].ModRevision, true
	return nil
}

// encode is the stored form of the bitmap: a core/v1 RangeAllocation in
// JSON, as strata stores objects.
func (r *etcdRange) encode() ([]byte, error) {
	rangeSpec, data := r.alloc.Snapshot()
	ra := corev1.RangeAllocation{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "RangeAllocation"},
		Range: rangeSpec, Data: data}
	return json.Marshal(&ra)
}
