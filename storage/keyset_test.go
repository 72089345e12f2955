package storage

import "testing"

// TestKeySetCounts: the per-prefix counts follow inserts, repeated inserts
// and deletes, for the resource's prefix and for each namespace's; a key
// set again carries its new entry.
func TestKeySetCounts(t *testing.T) {
	const res = "/registry/pods/"
	k := newKeySet()
	newest := map[string]*entry{}
	for _, key := range []string{res + "a/p1", res + "a/p2", res + "b/p1", res + "a/p1"} {
		newest[key] = &entry{}
		k.set(key, newest[key])
	}
	k.delete(res + "b/p1")
	k.delete(res + "b/missing")
	for prefix, want := range map[string]int{res: 2, res + "a/": 2, res + "b/": 0, res + "c/": 0} {
		if got := k.countUnder(res, prefix); got != want {
			t.Errorf("countUnder(%q) = %d, want %d", prefix, got, want)
		}
	}
	var keys []string
	k.ascendFrom(res+"a/p2", func(key string, _ *entry) bool { keys = append(keys, key); return true })
	if len(keys) != 1 || keys[0] != res+"a/p2" {
		t.Errorf("keys from a/p2: %v", keys)
	}
	k.ascendFrom(res, func(key string, e *entry) bool {
		if e != newest[key] {
			t.Errorf("%s: not the entry it was last set to", key)
		}
		return true
	})
}
