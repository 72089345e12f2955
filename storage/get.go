package storage

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Get implements Interface.
func (s *Store) Get(ctx context.Context, namespace, name string, opts GetOptions) (*unstructured.Unstructured, error) {
	key, err := s.objectKey(namespace, name)
	if err != nil {
		return nil, err
	}
	if opts.ResourceVersion == "" {
		if obj, ok, err := s.getConsistentFromCache(ctx, key, name, opts.Shared); ok {
			return obj, err
		}
		obj, _, err := s.getLatest(ctx, key, name)
		return obj, err
	}
	rv, err := parseResourceVersion(opts.ResourceVersion)
	if err != nil {
		return nil, err
	}
	if err := s.cache.waitRevision(ctx, rv, s.cfg.TooLargeRVWait); err != nil {
		return nil, err
	}
	return s.cached(key, name, opts.Shared)
}

// getConsistentFromCache serves a consistent GET (no resourceVersion) from
// the watch cache, as listConsistentFromCache serves lists: once the cache
// has reached a revision of etcd read after the request arrived, it holds
// what a quorum get would return. The revision read is shared with
// concurrent requests (sharedread). ok is false when the cache is not
// ready or cannot catch up in time; the caller then reads etcd. A store
// that converts between versions (Config.Convert) always reads etcd, so
// that every consistent GET converts as kube-apiserver's does: a
// conversion webhook is called on each, and its failure is the GET's.
func (s *Store) getConsistentFromCache(ctx context.Context, key, name string, shared bool) (*unstructured.Unstructured, bool, error) {
	if s.cfg.Convert != nil || !s.cache.isReady() {
		return nil, false, nil
	}
	rev, err := s.revisions.Current(ctx)
	if err != nil {
		return nil, false, nil
	}
	if err := s.cache.waitRevision(ctx, rev, s.cfg.TooLargeRVWait); err != nil {
		return nil, false, nil
	}
	obj, err := s.cached(key, name, shared)
	return obj, true, err
}

// cached returns the cached object at key (a copy unless shared), or why
// there is none.
func (s *Store) cached(key, name string, shared bool) (*unstructured.Unstructured, error) {
	if err := s.cache.corruptErr(key); err != nil {
		return nil, err
	}
	obj := s.cache.get(key)
	if obj == nil {
		return nil, notFound(s.cfg.Resource, name)
	}
	if shared {
		return obj, nil
	}
	return obj.DeepCopy(), nil
}

// getLatest is a quorum read of one key; it also returns the modification
// revision for a later compare-and-swap.
func (s *Store) getLatest(ctx context.Context, key, name string) (*unstructured.Unstructured, int64, error) {
	obj, modRev, _, err := s.readLatest(ctx, key, name)
	return obj, modRev, err
}

// readLatest is getLatest that also returns the apiVersion the object is
// stored with.
func (s *Store) readLatest(ctx context.Context, key, name string) (*unstructured.Unstructured, int64, string, error) {
	start := time.Now()
	resp, err := s.client.Get(ctx, key)
	s.observe("get", start, err)
	if err != nil {
		return nil, 0, "", internal(err, "storage: reading %s", key)
	}
	if len(resp.Kvs) == 0 {
		return nil, 0, "", notFound(s.cfg.Resource, name)
	}
	kv := resp.Kvs[0]
	obj, stored, err := s.decodeStored(kv)
	return obj, kv.ModRevision, stored, err
}
