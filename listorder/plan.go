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

// emit appends the slots of an identity whose first live item is first (-1:
// none): its live items, the first merged with patch item j, or patch item j
// alone.
func (ix *index) emit(first, j int32) {
	if first < 0 {
		ix.out = append(ix.out, Slot{Live: -1, Patch: j})
		return
	}
	ix.out = append(ix.out, Slot{Live: first, Patch: j})
	for k := ix.nextDup[first]; k >= 0; k = ix.nextDup[k] {
		ix.out = append(ix.out, Slot{Live: k, Patch: -1})
	}
}

func (ix *index) liveFor(id string) int32 {
	if i, ok := ix.firstLive[id]; ok {
		return i
	}
	return -1
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
	// Each directive entry is looked up once; its identity's state is then
	// kept by its first live item or, if it has none, by its patch item.
	type found struct{ live, patch int32 }
	entries := make([]found, len(ix.l.Order))
	listed := make([]bool, len(ix.l.Live)) // live item mentioned by the directive
	for k, id := range ix.l.Order {
		f := found{ix.liveFor(id), ix.patchFor(id)}
		entries[k] = f
		if f.live >= 0 && !listed[f.live] {
			for i := f.live; i >= 0; i = ix.nextDup[i] {
				listed[i] = true
			}
		}
	}
	for i := range ix.l.Live {
		if !ix.gone[i] && !listed[i] {
			ix.out = append(ix.out, Slot{Live: int32(i), Patch: -1})
		}
	}
	emittedPatch := make([]bool, len(ix.l.Patch))
	for _, f := range entries {
		switch {
		case f.live >= 0:
			if !listed[f.live] {
				continue // a repeated entry
			}
			listed[f.live] = false
		case f.patch >= 0:
			if emittedPatch[f.patch] {
				continue
			}
			emittedPatch[f.patch] = true
		default:
			continue // in neither list
		}
		ix.emit(f.live, f.patch)
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
		ix.emit(ix.liveFor(id), int32(j))
	}
	for ; s < len(serverOnly); s++ {
		ix.out = append(ix.out, Slot{Live: serverOnly[s], Patch: -1})
	}
	return ix.out
}
