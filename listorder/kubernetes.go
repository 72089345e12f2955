package listorder

import "sort"

// planKubernetes reproduces apimachinery's strategicpatch order: merge, then
// partition the result into patch items and server-only items, sort each
// part, and interleave them by live position. Identities stand in for the
// values apimachinery compares, and positions are looked up in maps rather
// than by scanning, but every comparison gives the same answer.
func planKubernetes(l List) []Slot {
	merged, serverOrder := kubeMerge(l)
	if l.HasOrder {
		merged = kubeSort(l, merged, l.Order, serverOrder)
	}
	if l.Set && len(l.Deleted) > 0 {
		merged = dropDeleted(l, merged)
	}
	return merged
}

// kubeMerge is apimachinery's mergeSlice: deletions, then patch items merged
// into their first live match or appended, then the order normalised.
//
// It also returns the live order $setElementOrder's sort compares by. That is
// apimachinery's original slice after mergeSlice has worked in it: deletions
// shift the remaining items left within the same array, and the first new
// items appended to the shortened slice land in the positions the deleted
// items left free, so they count as live, after every live item.
func kubeMerge(l List) ([]Slot, []string) {
	if l.Set {
		return kubeMergeSet(l), l.Live
	}
	deleted := setOf(l.Deleted)
	var merged []Slot
	var postLive []string
	firstPos := map[string]int{}
	for i, id := range l.Live {
		if _, del := deleted[id]; del && id != NoIdentity {
			continue
		}
		if _, seen := firstPos[id]; !seen {
			firstPos[id] = len(merged)
		}
		merged = append(merged, Slot{Live: int32(i), Patch: -1})
		postLive = append(postLive, id)
	}
	serverOrder := postLive
	freed := len(l.Live) - len(postLive)
	for j, id := range l.Patch {
		if p, ok := firstPos[id]; ok {
			merged[p].Patch = int32(j)
			continue
		}
		firstPos[id] = len(merged)
		merged = append(merged, Slot{Live: -1, Patch: int32(j)})
		if freed > 0 {
			if len(serverOrder) == len(postLive) {
				serverOrder = append(postLive[:len(postLive):len(postLive)], id)
			} else {
				serverOrder = append(serverOrder, id)
			}
			freed--
		}
	}
	if len(l.Patch) == 0 && !l.HasOrder {
		return merged, serverOrder
	}
	return kubeSort(l, merged, l.Patch, postLive), serverOrder
}

// kubeMergeSet is mergeSlice for primitives: original and patch values
// deduplicated, then ordered like maps.
func kubeMergeSet(l List) []Slot {
	if len(l.Patch) == 0 {
		merged := make([]Slot, 0, len(l.Live))
		for i := range l.Live {
			merged = append(merged, Slot{Live: int32(i), Patch: -1})
		}
		return merged
	}
	var merged []Slot
	pos := map[string]int{} // identity -> position in merged
	for i, id := range l.Live {
		if _, seen := pos[id]; !seen {
			pos[id] = len(merged)
			merged = append(merged, Slot{Live: int32(i), Patch: -1})
		}
	}
	for j, id := range l.Patch {
		if p, seen := pos[id]; seen {
			if merged[p].Patch < 0 {
				merged[p].Patch = int32(j)
			}
			continue
		}
		pos[id] = len(merged)
		merged = append(merged, Slot{Live: -1, Patch: int32(j)})
	}
	return kubeSort(l, merged, l.Patch, l.Live)
}

// kubeSort is apimachinery's partition + normalizeElementOrder: items whose
// identity is in patchOrder are sorted by it, the others by serverOrder, and
// the two runs are interleaved by serverOrder.
func kubeSort(l List, merged []Slot, patchOrder, serverOrder []string) []Slot {
	inPatch := setOf(patchOrder)
	var patchItems, serverOnly []Slot
	for _, s := range merged {
		if _, ok := inPatch[l.identity(s)]; ok {
			patchItems = append(patchItems, s)
		} else {
			serverOnly = append(serverOnly, s)
		}
	}
	patchPos, serverPos := firstIndex(patchOrder), firstIndex(serverOrder)
	stableSortBy(l, patchItems, patchPos)
	stableSortBy(l, serverOnly, serverPos)
	return interleave(l, serverOnly, patchItems, serverPos)
}

// stableSortBy sorts with apimachinery's comparator, including its answer
// "less" whenever either item is missing from the order.
func stableSortBy(l List, items []Slot, pos map[string]int) {
	sort.SliceStable(items, func(a, b int) bool {
		if pa, ok := pos[l.identity(items[a])]; ok {
			if pb, ok := pos[l.identity(items[b])]; ok {
				return pa < pb
			}
		}
		return true
	})
}

// interleave is apimachinery's mergeSortedSlice: a server-only item goes
// first only when both items have a live position and its is smaller.
func interleave(l List, left, right []Slot, pos map[string]int) []Slot {
	out := make([]Slot, 0, len(left)+len(right))
	i, j := 0, 0
	for i < len(left) || j < len(right) {
		switch {
		case i >= len(left):
			out = append(out, right[j])
			j++
		case j >= len(right):
			out = append(out, left[i])
			i++
		default:
			li, lok := pos[l.identity(left[i])]
			ri, rok := pos[l.identity(right[j])]
			if lok && rok && li < ri {
				out = append(out, left[i])
				i++
			} else {
				out = append(out, right[j])
				j++
			}
		}
	}
	return out
}

func dropDeleted(l List, merged []Slot) []Slot {
	deleted := setOf(l.Deleted)
	out := merged[:0]
	for _, s := range merged {
		if _, del := deleted[l.identity(s)]; !del {
			out = append(out, s)
		}
	}
	return out
}

// identity of a slot: its live item's, else its patch item's.
func (l List) identity(s Slot) string {
	if s.Live >= 0 {
		return l.Live[s.Live]
	}
	return l.Patch[s.Patch]
}

func setOf(ids []string) map[string]struct{} {
	m := make(map[string]struct{}, len(ids))
	for _, id := range ids {
		m[id] = struct{}{}
	}
	return m
}

func firstIndex(ids []string) map[string]int {
	m := make(map[string]int, len(ids))
	for i := len(ids) - 1; i >= 0; i-- {
		m[ids[i]] = i
	}
	return m
}
