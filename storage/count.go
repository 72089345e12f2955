package storage

import (
	"context"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// Count implements Interface.
func (s *Store) Count(ctx context.Context, namespace string) (int64, error) {
	prefix, err := s.listPrefix(namespace)
	if err != nil {
		return 0, err
	}
	start := time.Now()
	resp, err := s.client.Get(ctx, prefix, clientv3.WithPrefix(), clientv3.WithCountOnly())
	s.observe("count", start, err)
	if err != nil {
		return 0, internal(err, "storage: counting %s", prefix)
	}
	return resp.Count, nil
}
