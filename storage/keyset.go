package storage

import (
	"strings"

	"github.com/google/btree"
)

// keySet is the watch cache's ordered set of keys: a B-tree, so that a
// write costs O(log n) however many objects the resource holds, with the
// number of keys under each parent prefix ("/registry/pods/ns/"), so that
// a page of a list can say how many items remain without walking them.
// Each key carries its entry, so that a list walks the tree alone: looking
// each key up in the cache's map as well was most of a list's walk of
// 1,000 objects (a map probe per key, out of the processor's cache).
type keySet struct {
	tree   *btree.BTreeG[keyed]
	counts map[string]int // keys by parent prefix
}

// keyed is a key and its current entry.
type keyed struct {
	key string
	e   *entry
}

func newKeySet() *keySet {
	return &keySet{tree: btree.NewG(32, func(a, b keyed) bool { return a.key < b.key }), counts: map[string]int{}}
}

// parent is the key's prefix up to and including its last '/'.
func parent(key string) string { return key[:strings.LastIndexByte(key, '/')+1] }

// set makes e key's entry, adding the key if it is new.
func (k *keySet) set(key string, e *entry) {
	if _, replaced := k.tree.ReplaceOrInsert(keyed{key, e}); !replaced {
		k.counts[parent(key)]++
	}
}

func (k *keySet) delete(key string) {
	if _, found := k.tree.Delete(keyed{key: key}); found {
		p := parent(key)
		if k.counts[p]--; k.counts[p] == 0 {
			delete(k.counts, p)
		}
	}
}

// countUnder is the number of keys that start with prefix, which is the
// resource's own prefix (all keys) or a namespace's (listPrefix).
func (k *keySet) countUnder(resourcePrefix, prefix string) int {
	if prefix == resourcePrefix {
		return k.tree.Len()
	}
	return k.counts[prefix]
}

// ascendFrom calls fn for each key and its entry from start on, in
// order, until fn returns false.
func (k *keySet) ascendFrom(start string, fn func(key string, e *entry) bool) {
	k.tree.AscendGreaterOrEqual(keyed{key: start}, func(it keyed) bool { return fn(it.key, it.e) })
}
