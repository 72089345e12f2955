package storage

import (
	"strings"

	"github.com/google/btree"
)

// keySet is the watch cache's ordered set of keys: a B-tree, so that a
// write costs O(log n) however many objects the resource holds, with the
// number of keys under each parent prefix ("/registry/pods/ns/"), so that
// a page of a list can say how many items remain without walking them.
type keySet struct {
	tree   *btree.BTreeG[string]
	counts map[string]int // keys by parent prefix
}

func newKeySet() *keySet {
	return &keySet{tree: btree.NewG(32, func(a, b string) bool { return a < b }), counts: map[string]int{}}
}

// parent is the key's prefix up to and including its last '/'.
func parent(key string) string { return key[:strings.LastIndexByte(key, '/')+1] }

func (k *keySet) insert(key string) {
	if _, replaced := k.tree.ReplaceOrInsert(key); !replaced {
		k.counts[parent(key)]++
	}
}

func (k *keySet) delete(key string) {
	if _, found := k.tree.Delete(key); found {
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

// ascendFrom calls fn for each key from start on, in order, until fn
// returns false.
func (k *keySet) ascendFrom(start string, fn func(key string) bool) {
	k.tree.AscendGreaterOrEqual(start, fn)
}
