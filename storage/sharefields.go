package storage

import "encoding/json"

// fieldsTableBytes bounds the JSON a fieldsTable keeps as keys; past it the
// table starts afresh (objects keep what they share).
const fieldsTableBytes = 1 << 20

// fieldsTable lets the watch cache's objects share their decoded managed
// fields' fieldsV1 sets: the objects of a resource written by the same
// manager own the same fields, and decoded, each set is a tree of maps
// (~800 bytes of the ~3.8 KB of a 1 KiB ConfigMap's decoded form) that
// kube-apiserver's typed cache keeps as ~40 bytes of JSON. One tree per
// distinct set serves every object that has it.
//
// Sharing is safe because cached objects are never changed in place: the
// cache hands them out shared already, and whoever changes one deep-copies
// it first. Only the cache's run goroutine uses a table.
type fieldsTable struct {
	sets  map[string]map[string]any // by the set's JSON
	bytes int                       // of the keys
}

// share replaces the fieldsV1 of obj's managed fields by the table's equal
// trees, and adds those the table does not have. obj is not shared yet.
func (t *fieldsTable) share(obj map[string]any) {
	meta, _ := obj["metadata"].(map[string]any)
	entries, _ := meta["managedFields"].([]any)
	for _, e := range entries {
		entry, _ := e.(map[string]any)
		set, ok := entry["fieldsV1"].(map[string]any)
		if !ok {
			continue
		}
		b, err := json.Marshal(set) // keys sorted: equal sets, equal JSON
		if err != nil {
			continue
		}
		if same, ok := t.sets[string(b)]; ok {
			entry["fieldsV1"] = same
			continue
		}
		if t.sets == nil || t.bytes+len(b) > fieldsTableBytes {
			t.sets, t.bytes = map[string]map[string]any{}, 0
		}
		t.sets[string(b)] = set
		t.bytes += len(b)
	}
}
