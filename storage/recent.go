package storage

import (
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// recentWrites remembers the revision of the store's latest update of
// each key until the watch cache has surely seen it. An update starts from
// the cache's copy, which the compare-and-swap then checks; a client that
// updates an object again as soon as its last update is answered (a
// controller patching its object, a status loop) would otherwise start
// from the copy before that update whenever the cache lags, compute the
// whole update, fail the swap and compute it again: under load, twice the
// work for every such update.
type recentWrites struct {
	mu   sync.Mutex
	revs map[string]int64
}

// maxRecentWrites bounds the map: when full, keys the cache has caught up
// with go, and if none has, all.
const maxRecentWrites = 4096

// note records rev as key's latest update. cacheRev, the revision the
// cache has reached, is asked for only when the map is full.
func (w *recentWrites) note(key string, rev int64, cacheRev func() int64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.revs == nil {
		w.revs = map[string]int64{}
	}
	if len(w.revs) >= maxRecentWrites {
		seen := cacheRev()
		for k, r := range w.revs {
			if r <= seen {
				delete(w.revs, k)
			}
		}
		if len(w.revs) >= maxRecentWrites {
			clear(w.revs)
		}
	}
	w.revs[key] = rev
}

func (w *recentWrites) rev(key string) int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.revs[key]
}

// cachedForUpdate returns the cache's copy of key and its modification
// revision, unless the cache has not seen the store's last update of key
// yet: then nil, and the update reads etcd at once (one range costs less
// than an update computed in vain, and waiting for the watch would cost a
// client updating in a loop the watch's delay every time).
func (s *Store) cachedForUpdate(key string) (*unstructured.Unstructured, int64) {
	cur, modRev := s.cache.getWithRevision(key)
	if cur == nil || modRev < s.written.rev(key) {
		return nil, 0
	}
	return cur, modRev
}
