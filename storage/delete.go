package storage

import (
	"context"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Delete implements Interface. The delete is a compare-and-swap on the
// modification revision that was checked against the preconditions, retried
// when the object changed in between.
func (s *Store) Delete(ctx context.Context, namespace, name string, pre *Preconditions) (*unstructured.Unstructured, error) {
	key, err := s.objectKey(namespace, name)
	if err != nil {
		return nil, err
	}
	cur, modRev, err := s.getLatest(ctx, key, name)
	if err != nil {
		return nil, err
	}
	for {
		if err := pre.Check(s.cfg.Resource, cur); err != nil {
			return nil, err
		}
		start := time.Now()
		resp, err := s.client.Txn(ctx).
			If(clientv3.Compare(clientv3.ModRevision(key), "=", modRev)).
			Then(clientv3.OpDelete(key)).
			Else(clientv3.OpGet(key)).
			Commit()
		s.observe("delete", start, err)
		if err != nil {
			return nil, s.writeError(err, key)
		}
		if resp.Succeeded {
			return cur, nil
		}
		// Lost a race: retry on the fresh state (NotFound if it was deleted).
		if cur, modRev, _, err = s.fromTxnGet(resp, key, name); err != nil {
			return nil, err
		}
	}
}
