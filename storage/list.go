package storage

import (
	"context"
	"strconv"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// maxFilterBatch caps how many keys one range reads while filling a page
// through a selector.
const maxFilterBatch = 10000

// page is one list result before it becomes an UnstructuredList.
type page struct {
	items []unstructured.Unstructured
	// memos are the items' memos when the watch cache holds their
	// versions, nil for the others; empty when no item has one.
	memos     []*Memo
	rev       int64
	next      string // relative start key of the next page; "" when done
	remaining *int64
}

// List implements Interface.
func (s *Store) List(ctx context.Context, namespace string, opts ListOptions) (*unstructured.UnstructuredList, error) {
	list, _, err := s.ListMemos(ctx, namespace, opts)
	return list, err
}

// ListMemos is List that also returns, item by item, the Memo of each
// item whose version the watch cache holds (nil for the others, and no
// slice when none has one), for encodings that lists share.
func (s *Store) ListMemos(ctx context.Context, namespace string, opts ListOptions) (*unstructured.UnstructuredList, []*Memo, error) {
	pg, err := s.listPage(ctx, namespace, opts)
	if err != nil {
		return nil, nil, err
	}
	return s.toList(pg), pg.memos, nil
}

// listPage reads a list's page where its resourceVersion says.
func (s *Store) listPage(ctx context.Context, namespace string, opts ListOptions) (page, error) {
	prefix, err := s.listPrefix(namespace)
	if err != nil {
		return page{}, err
	}
	p, err := s.planList(opts)
	if err != nil {
		return page{}, err
	}
	switch p.mode {
	case readAny, readNotOlder:
		if err := s.cache.waitRevision(ctx, p.rv, s.cfg.TooLargeRVWait); err != nil {
			return page{}, err
		}
		return s.cache.list(prefix, p)
	case readContinue:
		return s.listEtcd(ctx, prefix, prefix+p.token.Start, p.rv, p)
	case readExact:
		return s.listEtcd(ctx, prefix, prefix, p.rv, p)
	}
	if p.limit == 0 {
		if pg, ok, err := s.listConsistentFromCache(ctx, prefix, p); ok {
			return pg, err
		}
	}
	return s.listEtcd(ctx, prefix, prefix, 0, p)
}

// listConsistentFromCache serves a consistent list (no resourceVersion)
// from the watch cache, as kube-apiserver does since ConsistentListFromCache:
// etcd's current revision is read (a quorum read of one key, without
// values, shared with concurrent requests), and once the cache has reached it the cache holds exactly what
// a quorum range would return. ok is false when the cache cannot catch up
// in time; the caller then reads etcd.
func (s *Store) listConsistentFromCache(ctx context.Context, prefix string, p listPlan) (page, bool, error) {
	rev, err := s.revisions.Current(ctx)
	if err != nil {
		return page{}, false, nil
	}
	if err := s.cache.waitRevision(ctx, rev, s.cfg.TooLargeRVWait); err != nil {
		return page{}, false, nil
	}
	pg, err := s.cache.list(prefix, p)
	return pg, true, err
}

// listEtcd reads a page from etcd starting at key start, at revision rev
// (0: newest), waiting briefly for a future revision and turning a compacted
// one into 410 Expired.
func (s *Store) listEtcd(ctx context.Context, prefix, start string, rev int64, p listPlan) (page, error) {
	pg, err := s.rangePage(ctx, prefix, start, rev, p)
	if isFutureRev(err) {
		if werr := s.cache.waitRevision(ctx, rev, s.cfg.TooLargeRVWait); werr != nil {
			return page{}, werr
		}
		pg, err = s.rangePage(ctx, prefix, start, rev, p)
	}
	switch {
	case isCompacted(err):
		return page{}, s.expiredList(p, start[len(prefix):])
	case err != nil && isStoreError(err):
		return page{}, err
	case err != nil:
		return page{}, internal(err, "storage: listing %s at revision %d", prefix, rev)
	}
	return pg, nil
}

// expiredList is 410 Expired for a compacted revision: for a continue token,
// with an inconsistent token that goes on from the same key at the newest
// revision.
func (s *Store) expiredList(p listPlan, start string) error {
	if p.mode != readContinue {
		return expired("The resourceVersion for the provided list is too old.", "", nil)
	}
	return expired("The provided continue parameter is too old to display a consistent list result. "+
		"You can start a new list without the continue parameter, or use the continue token in this "+
		"response to retrieve the remainder of the results. Continuing with the provided token results "+
		"in an inconsistent list - objects that were created, modified, or deleted between the time the "+
		"first chunk was returned and now may show up in the list.", encodeContinue(inconsistentRV, start), nil)
}

// rangePage reads ranges from start until the page holds limit matching
// objects or the prefix ends. Every range reads the same revision.
func (s *Store) rangePage(ctx context.Context, prefix, start string, rev int64, p listPlan) (page, error) {
	end := clientv3.GetPrefixRangeEnd(prefix)
	pg, batch := page{rev: rev}, p.limit
	for key := start; ; {
		opts := []clientv3.OpOption{clientv3.WithRange(end)}
		if pg.rev > 0 {
			opts = append(opts, clientv3.WithRev(pg.rev))
		}
		if p.limit > 0 {
			opts = append(opts, clientv3.WithLimit(batch))
		}
		start := time.Now()
		resp, err := s.client.Get(ctx, key, opts...)
		s.observe("list", start, err)
		if err != nil {
			return pg, err
		}
		if pg.rev == 0 {
			pg.rev = resp.Header.Revision
		}
		full, err := s.fillPage(&pg, resp, prefix, p)
		if err != nil || full || !resp.More || len(resp.Kvs) == 0 {
			return pg, err
		}
		key = string(resp.Kvs[len(resp.Kvs)-1].Key) + "\x00"
		batch = min(batch*2, maxFilterBatch)
	}
}

// fillPage appends the matching objects of one range; it reports true when
// the page reached its limit, and then records where the next page starts.
func (s *Store) fillPage(pg *page, resp *clientv3.GetResponse, prefix string, p listPlan) (bool, error) {
	cached := s.cache.reuse(resp.Kvs)
	for i, kv := range resp.Kvs {
		var obj *unstructured.Unstructured
		var memo *Memo
		if e := cached[i]; e != nil {
			obj, memo = e.obj, &e.memo
		} else {
			var err error
			if obj, err = s.decodeKV(kv); err != nil {
				// The first one met: this read stops there.
				key := string(kv.Key)
				return false, storeReadError(s.cfg.Resource, []string{key}, map[string]*Error{key: asCorrupt(err)})
			}
		}
		if !p.pred.matches(obj) {
			continue
		}
		pg.add(obj, memo)
		if p.limit <= 0 || int64(len(pg.items)) < p.limit {
			continue
		}
		if i < len(resp.Kvs)-1 || resp.More {
			pg.next = strings.TrimPrefix(string(kv.Key), prefix) + "\x00"
			if p.pred.empty() {
				n := resp.Count - int64(i+1)
				pg.remaining = &n
			}
		}
		return true, nil
	}
	return false, nil
}

// add appends an item and its memo (nil when the cache does not hold its
// version), keeping memos empty until an item has one.
func (pg *page) add(obj *unstructured.Unstructured, memo *Memo) {
	if memo != nil && pg.memos == nil {
		pg.memos = make([]*Memo, len(pg.items), cap(pg.items))
	}
	pg.items = append(pg.items, *obj)
	if pg.memos != nil {
		pg.memos = append(pg.memos, memo)
	}
}

// toList wraps a page as the list the API returns.
func (s *Store) toList(pg page) *unstructured.UnstructuredList {
	l := &unstructured.UnstructuredList{Object: map[string]any{}, Items: pg.items}
	if l.Items == nil {
		l.Items = []unstructured.Unstructured{}
	}
	l.SetAPIVersion(s.cfg.Kind.GroupVersion().String())
	l.SetKind(s.cfg.Kind.Kind + "List")
	l.SetResourceVersion(strconv.FormatInt(pg.rev, 10))
	if pg.next != "" {
		l.SetContinue(encodeContinue(pg.rev, pg.next))
		l.SetRemainingItemCount(pg.remaining)
	}
	return l
}

// isStoreError reports whether err is already one of the store's errors.
func isStoreError(err error) bool {
	_, ok := err.(*Error)
	return ok
}
