package storage

import (
	"sync/atomic"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Memo keeps what the API layer encodes of one version of an object the
// watch cache holds, so that every list reading that version shares one
// encoding of it, as kube-apiserver's cachingObject shares a watch event's
// serializations. It lives exactly as long as the cache holds the version
// (a change of the object brings a new Memo), so its bytes need no key and
// no bound of their own, and a list finds them without reading the
// object's metadata. What each slot holds is the caller's to say; it must
// depend only on the object's content.
type Memo struct {
	slots [MemoSlots]atomic.Pointer[[]byte]
}

// MemoSlots is how many encodings one Memo keeps.
const MemoSlots = 2

// Load returns the bytes kept in slot, or nil.
func (m *Memo) Load(slot int) []byte {
	if p := m.slots[slot].Load(); p != nil {
		return *p
	}
	return nil
}

// Store keeps data in slot. Concurrent stores of one slot keep either.
func (m *Memo) Store(slot int, data []byte) { m.slots[slot].Store(&data) }

// entry is one object the watch cache holds: its decoded state (shared by
// reads, never changed), its modification revision, its stored size (key
// and value) and the memo of its encodings.
type entry struct {
	obj    *unstructured.Unstructured
	modRev int64
	size   int64
	memo   Memo
}
