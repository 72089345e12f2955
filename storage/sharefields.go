package storage

import (
	"maps"

	"github.com/stratadev/strata/internal/jsonenc"
)

// fieldsTableBytes bounds the JSON a fieldsTable keeps as keys; past it the
// table starts afresh (objects keep what they share).
const fieldsTableBytes = 1 << 20

// fieldsTable lets the watch cache's objects share their decoded managed
// fields. Decoded, a managedFields list is a map per entry and, in each,
// its fieldsV1 set as a tree of maps: ~1.2 KB of the ~2.4 KB of a 1 KiB
// ConfigMap's decoded form, which kube-apiserver's typed cache keeps as
// structs and ~40 bytes of JSON per set. Objects a manager writes in the
// same second with the same fields (a chart, a controller's burst, a
// bulk load) have equal lists, and the objects of a resource written by
// the same manager own the same fields: one list per distinct list, and
// one tree per distinct set, serve every object that has it.
//
// Sharing is safe because cached objects are never changed in place: the
// cache hands them out shared already, and whoever changes one deep-copies
// it first. Only the cache's run goroutine uses a table.
type fieldsTable struct {
	lists map[string][]any          // by the list's JSON
	sets  map[string]map[string]any // by the set's JSON
	bytes int                       // of the keys (and knownBytes a known list)
	// known are the lists share has seen, by their first entry's address,
	// each with the table's equal list: the decoder hands the same list to
	// every object whose stored list has the same bytes (Store.reuse), and
	// its sets are shared already.
	known map[*any][]any
}

// knownBytes is what a known list counts for in the table's bound.
const knownBytes = 64

// share replaces obj's managed fields by the table's equal list, or else
// by a list of its entries with their fieldsV1 sets replaced by the
// table's equal trees, and adds what the table does not have. obj is not
// shared yet, but its list may be: the decoder hands out one list for
// equal bytes (Store.reuse), so the list is never changed in place.
func (t *fieldsTable) share(obj map[string]any) {
	meta, _ := obj["metadata"].(map[string]any)
	entries, _ := meta["managedFields"].([]any)
	if len(entries) == 0 {
		return
	}
	if same, ok := t.known[&entries[0]]; ok {
		meta["managedFields"] = same
		return
	}
	b, err := jsonenc.Marshal(entries) // keys sorted: equal lists, equal JSON
	if err != nil {
		return
	}
	same, ok := t.lists[string(b)]
	if !ok {
		same = t.shareSets(entries)
		t.room(len(b) + knownBytes)
		t.lists[string(b)] = same
		t.bytes += len(b)
	} else {
		t.room(knownBytes)
	}
	meta["managedFields"] = same
	t.known[&entries[0]] = same
	t.bytes += knownBytes
}

// shareSets returns a copy of entries whose fieldsV1 sets are the table's
// equal trees.
func (t *fieldsTable) shareSets(entries []any) []any {
	shared := make([]any, len(entries))
	for i, e := range entries {
		shared[i] = e
		entry, _ := e.(map[string]any)
		if set, ok := entry["fieldsV1"].(map[string]any); ok {
			entry = maps.Clone(entry)
			entry["fieldsV1"] = t.shareSet(set)
			shared[i] = entry
		}
	}
	return shared
}

// shareSet returns the table's tree equal to set, adding set if it has
// none.
func (t *fieldsTable) shareSet(set map[string]any) map[string]any {
	b, err := jsonenc.Marshal(set)
	if err != nil {
		return set
	}
	if same, ok := t.sets[string(b)]; ok {
		return same
	}
	t.room(len(b))
	t.sets[string(b)] = set
	t.bytes += len(b)
	return set
}

// room starts the table afresh if a key of n more bytes would take it
// past fieldsTableBytes.
func (t *fieldsTable) room(n int) {
	if t.lists == nil || t.bytes+n > fieldsTableBytes {
		t.lists, t.sets, t.known, t.bytes = map[string][]any{}, map[string]map[string]any{}, map[*any][]any{}, 0
	}
}
