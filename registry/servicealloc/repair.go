package servicealloc

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	clientv3 "go.etcd.io/etcd/client/v3"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	api "k8s.io/kubernetes/pkg/apis/core"
	"k8s.io/kubernetes/pkg/registry/core/rangeallocation"

	corev1 "k8s.io/api/core/v1"
)

// Registries are the stored bitmaps as upstream's repair controllers read
// and replace them (rangeallocation.RangeRegistry): they rebuild the
// bitmaps from the Services, which frees leaked items, takes in Services
// stored before strata allocated (or written around it), and moves the
// allocations to a changed range.
type Registries struct {
	ClusterIPs, NodePorts rangeallocation.RangeRegistry
}

// NewRegistries reads and writes the bitmaps New allocates from.
func NewRegistries(cfg Config) (Registries, error) {
	cfg, err := cfg.complete()
	if err != nil {
		return Registries{}, err
	}
	prefix := strings.TrimSuffix(cfg.Prefix, "/")
	// Only the key matters to Get and CreateOrUpdate: the repair sizes
	// its bitmaps itself.
	return Registries{
		ClusterIPs: newEtcdRange(cfg.Client, prefix+ipKey, 0, cfg.ClusterIPRange.String(), 0),
		NodePorts:  newEtcdRange(cfg.Client, prefix+portKey, 0, cfg.NodePortRange.String(), 0),
	}, nil
}

// The keys of the bitmaps under the prefix, as kube-apiserver's.
const (
	ipKey   = "/ranges/serviceips"
	portKey = "/ranges/servicenodeports"
)

var _ rangeallocation.RangeRegistry = (*etcdRange)(nil)

// Get returns the stored bitmap with its revision as resourceVersion, or
// an empty one when nothing is stored.
func (r *etcdRange) Get() (*api.RangeAllocation, error) {
	ctx, cancel := context.WithTimeout(context.Background(), etcdTimeout)
	defer cancel()
	resp, err := r.client.Get(ctx, r.key)
	if err != nil {
		return nil, fmt.Errorf("%s: reading the allocation: %w", r.key, err)
	}
	out := &api.RangeAllocation{}
	if len(resp.Kvs) == 0 {
		return out, nil
	}
	kv := resp.Kvs[0]
	var ra corev1.RangeAllocation
	if err := json.Unmarshal(kv.Value, &ra); err != nil {
		return nil, fmt.Errorf("%s: decoding the allocation: %w", r.key, err)
	}
	out.Range, out.Data = ra.Range, ra.Data
	out.ResourceVersion = strconv.FormatInt(kv.ModRevision, 10)
	r.mu.Lock()
	r.read.rev, r.read.value = kv.ModRevision, kv.Value
	r.mu.Unlock()
	return out, nil
}

// CreateOrUpdate replaces the stored bitmap with snapshot if it is still
// the one read at snapshot's resourceVersion (or, without one, if none is
// stored): a Conflict otherwise, as upstream's allocator storage answers.
//
// A snapshot equal to what Get read at its resourceVersion is not written
// again: the repairs rewrite both bitmaps at every start and every three
// minutes, almost always unchanged, and each write was a log entry and an
// fsync on the way to serving. A transaction that only compares is a read
// in etcd, and still answers a Conflict if the key has changed since.
func (r *etcdRange) CreateOrUpdate(snapshot *api.RangeAllocation) error {
	cmp := clientv3.Compare(clientv3.CreateRevision(r.key), "=", 0)
	var rev int64
	if snapshot.ResourceVersion != "" {
		var err error
		if rev, err = strconv.ParseInt(snapshot.ResourceVersion, 10, 64); err != nil {
			return fmt.Errorf("%s: resourceVersion %q: %w", r.key, snapshot.ResourceVersion, err)
		}
		cmp = clientv3.Compare(clientv3.ModRevision(r.key), "=", rev)
	}
	value, err := json.Marshal(&corev1.RangeAllocation{Range: snapshot.Range, Data: snapshot.Data})
	if err != nil {
		return err
	}
	r.mu.Lock()
	unchanged := rev != 0 && rev == r.read.rev && bytes.Equal(value, r.read.value)
	r.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), etcdTimeout)
	defer cancel()
	txn := r.client.Txn(ctx).If(cmp)
	if !unchanged {
		txn = txn.Then(clientv3.OpPut(r.key, string(value)))
	}
	resp, err := txn.Commit()
	if err != nil {
		return fmt.Errorf("%s: writing the allocation: %w", r.key, err)
	}
	if !resp.Succeeded {
		return apierrors.NewConflict(api.Resource("rangeallocations"), "", fmt.Errorf("the provided resource version does not match"))
	}
	if unchanged {
		return nil
	}
	// Allocators over the key (other etcdRange values) see the new bitmap
	// at their next change: their compare-and-swap fails and reloads.
	r.mu.Lock()
	r.loaded = false
	r.mu.Unlock()
	return nil
}

// complete fills the defaults.
func (cfg Config) complete() (Config, error) {
	if cfg.ClusterIPRange == nil {
		cidr, err := ParseClusterIPRange(DefaultServiceClusterIPRange)
		if err != nil {
			return cfg, err
		}
		cfg.ClusterIPRange = cidr
	}
	if cfg.NodePortRange.Size == 0 {
		pr, err := ParseNodePortRange(DefaultServiceNodePortRange)
		if err != nil {
			return cfg, err
		}
		cfg.NodePortRange = pr
	}
	return cfg, nil
}
