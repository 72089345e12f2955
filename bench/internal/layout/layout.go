// Package layout names where the bench keeps its objects, in the API and
// in etcd, for the load generator and the floor server alike.
package layout

import (
	"context"
	"fmt"

	clientv3 "go.etcd.io/etcd/client/v3"
)

const (
	// Namespace holds the listed ConfigMaps and every cell's objects.
	Namespace = "bench"
	// StoredPrefix is where strata keeps the namespace's ConfigMaps
	// (kube-apiserver's layout, /registry/{resource}/{namespace}/).
	StoredPrefix = "/registry/configmaps/" + Namespace + "/"
	// RawPrefix is where the raw etcd operations and the floor write,
	// outside strata's prefixes (so no watch cache sees them).
	RawPrefix = "/bench-raw/"
	// WatchTarget is the object (and raw key) the watch cells write.
	WatchTarget = "watch-target"
)

// PutIfAbsent puts value at key if the key has never been created: the
// etcd work of a create.
func PutIfAbsent(ctx context.Context, kv clientv3.KV, key, value string) error {
	resp, err := kv.Txn(ctx).If(clientv3.Compare(clientv3.CreateRevision(key), "=", 0)).
		Then(clientv3.OpPut(key, value)).Commit()
	if err == nil && !resp.Succeeded {
		err = fmt.Errorf("%s exists", key)
	}
	return err
}
