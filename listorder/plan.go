package listorder

import "math"

// index holds one list's items by identity, built once so that the default
// rule runs in time linear in the lists' lengths.
type index struct {
	l         List
	gone      []bool           // live item deleted, or a dropped set duplicate
	firstLive map[string]int32 // identity -> first remaining live item
	nextDup   []int32          // live item -> next live item of the same identity, or -1
	patchOf   map[string]int32 // identity -> patch item
	skipPatch []bool           // patch item dropped (a set duplicate or a deleted value)
	out       []Slot
}

func newIndex(l List) *index {
	deleted := make(map[string]struct{}, len(l.Deleted))
	for _, id := range l.Deleted {
		deleted[id] = struct{}{}
	}
	ix := &index{
		l:         l,
		gone:      make([]bool, len(l.Live)),
		firstLive: make(map[string]int32, len(l.Live)),
		nextDup:   make([]int32, len(l.Live)),
		patchOf:   make(map[string]int32, len(l.Patch)),
		skipPatch: make([]bool, len(l.Patch)),
		out:       make([]Slot, 0, len(l.Live)+len(l.Patch)),
	}
	// lastOf[first]: the last live item so far of the identity whose first
	// live item is first.
	lastOf := make([]int32, len(l.Live))
	for i, id := range l.Live {
		ix.nextDup[i] = -1
		if id == NoIdentity {
			continue
		}
		if _, del := deleted[id]; del {
			ix.gone[i] = true
			continue
		}
		first, seen := ix.firstLive[id]
		switch {
		case !seen:
			ix.firstLive[id] = int32(i)
			lastOf[i] = int32(i)
		case l.Set:
			ix.gone[i] = true
		default:
			ix.nextDup[lastOf[first]] = int32(i)
			lastOf[first] = int32(i)
		}
	}
	for j, id := range l.Patch {
		_, del := deleted[id]
		_, seen := ix.patchOf[id]
		if seen || (l.Set && del) {
			ix.skipPatch[j] = true
			continue
		}
		ix.patchOf[id] = int32(j)
	}
	return ix
}

// emit appends identity id's slot: its live items (the first merged with
// patch item j) or patch item j alone.
func (ix *index) emit(id string, j int32) {
	first, live := ix.firstLive[id]
	if !live {
		ix.out = append(ix.out, Slot{Live: -1, Patch: j})
		return
	}
	ix.out = append(ix.out, Slot{Live: first, Patch: j})
	for k := ix.nextDup[first]; k >= 0; k = ix.nextDup[k] {
		ix.out = append(ix.out, Slot{Live: k, Patch: -1})
	}
}

func (ix *index) patchFor(id string) int32 {
	if j, ok := ix.patchOf[id]; ok {
		return j
	}
	return -1
}

// serverOnly reports whether live item i stays where the live list has it
// because the patch (or its directive) does not mention it.
func (ix *index) serverOnly(i int, mentioned func(string) bool) bool {
	if ix.gone[i] {
		return false
	}
	id := ix.l.Live[i]
	return id == NoIdentity || !mentioned(id)
}

func (ix *index) withOrder() []Slot {
	// firstOrder: identity -> its first entry in the directive.
	firstOrder := make(map[string]int, len(ix.l.Order))
	for i := len(ix.l.Order) - 1; i >= 0; i-- {
		firstOrder[ix.l.Order[i]] = i
	}
	mentioned := func(id string) bool { _, ok := firstOrder[id]; return ok }
	for i := range ix.l.Live {
		if ix.serverOnly(i, mentioned) {
			ix.out = append(ix.out, Slot{Live: int32(i), Patch: -1})
		}
	}
	for i, id := range ix.l.Order {
		if firstOrder[id] != i {
			continue // a repeated entry
		}
		_, live := ix.firstLive[id]
		if j := ix.patchFor(id); live || j >= 0 {
			ix.emit(id, j)
		}
	}
	return ix.out
}

func (ix *index) withoutOrder() []Slot {
	mentioned := func(id string) bool { _, ok := ix.patchOf[id]; return ok }
	var serverOnly []int32
	for i := range ix.l.Live {
		if ix.serverOnly(i, mentioned) {
			serverOnly = append(serverOnly, int32(i))
		}
	}
	// nextLive[j]: live position of the first live patch item at or after j.
	nextLive := make([]int32, len(ix.l.Patch))
	next := int32(math.MaxInt32)
	for j := len(ix.l.Patch) - 1; j >= 0; j-- {
		if !ix.skipPatch[j] {
			if first, ok := ix.firstLive[ix.l.Patch[j]]; ok {
				next = first
			}
		}
		nextLive[j] = next
	}
	s := 0
	for j, id := range ix.l.Patch {
		if ix.skipPatch[j] {
			continue
		}
		for s < len(serverOnly) && serverOnly[s] < nextLive[j] {
			ix.out = append(ix.out, Slot{Live: serverOnly[s], Patch: -1})
			s++
		}
		ix.emit(id, int32(j))
	}
	for ; s < len(serverOnly); s++ {
		ix.out = append(ix.out, Slot{Live: serverOnly[s], Patch: -1})
	}
	return ix.out
}
