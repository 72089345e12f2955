// Package listorder decides the order of a merged list in a strategic merge
// patch. It works on element identities — canonical strings for a list of
// primitives' values, or for a list of maps' merge-key values — so the same
// rules serve every document representation.
//
// # The default rule
//
// Live items that the patch does not mention are "server-only".
//
// With $setElementOrder: server-only items come first, in their live order;
// then the directive's items in its order. Entries that exist nowhere are
// ignored, deleted items are gone. For example, live [C, B, D, A, E] with
// $setElementOrder [A, B] gives [C, D, E, A, B].
//
// Without it: walk the patch items in patch order. Before each item, emit the
// server-only items that come, in the live list, before the next patch item
// that is also live (counting the current one), or all remaining server-only
// items when no live patch item follows. Emit server-only items left at the
// end. So live [B, C, A] with patch [A', B', D] gives [C, A', B', D], and
// live [A, B, X] with patch [N, A', B'] gives [N, A', B', X].
//
// Duplicates: when the live list holds several items with one identity, a
// patch item merges into the first of them, and all of them move together,
// in live order, to the position the rule gives the identity; a deletion
// removes all of them. In a set (a merge list of primitives) duplicates are
// dropped, keeping the first occurrence.
//
// # Kubernetes compatibility
//
// Mode Kubernetes reproduces apimachinery's order instead: it sorts patch
// items and server-only items separately and interleaves them by live
// position, putting new items before server-only ones.
package listorder

import "strconv"

import "slices"

// Mode selects the ordering rules.
type Mode uint8

const (
	// Default is strata's rule, described in the package documentation.
	Default Mode = iota
	// Kubernetes reproduces apimachinery's strategicpatch ordering.
	Kubernetes
)

// NoIdentity marks a live item that has no identity (a map lacking its merge
// key): it is never matched by a patch item and always stays server-only.
const NoIdentity = ""

// List describes one list merge.
type List struct {
	Live  []string // identity of each live item, NoIdentity if it has none
	Patch []string // identity of each patch item (directive elements excluded)
	// Deleted holds identities to remove from the live list ($patch: delete
	// elements, $deleteFromPrimitiveList values).
	Deleted []string
	// Order holds the $setElementOrder entries; HasOrder tells whether the
	// directive is present at all (it may be empty).
	Order    []string
	HasOrder bool
	// Set marks a list of primitives: duplicates are dropped, and a deleted
	// value stays deleted even when the patch adds it.
	Set bool
}

// Slot is one item of the merged list: a live item, a patch item, or a live
// item merged with a patch item. An absent side is -1.
type Slot struct {
	Live  int32
	Patch int32
}

// Plan returns the merged list as a sequence of slots, after validating the
// patch against $setElementOrder.
func Plan(l List, mode Mode) ([]Slot, error) {
	if err := checkPatch(l, mode); err != nil {
		return nil, err
	}
	if l.HasOrder {
		if err := checkOrder(l, mode); err != nil {
			return nil, err
		}
	}
	if mode == Kubernetes {
		return planKubernetes(l), nil
	}
	ix := newIndex(l)
	if l.HasOrder {
		return ix.withOrder(), nil
	}
	return ix.withoutOrder(), nil
}

// checkPatch rejects a patch list naming one identity twice (sets drop such
// duplicates instead).
func checkPatch(l List, mode Mode) error {
	if l.Set {
		return nil
	}
	seen := make(map[string]int, len(l.Patch))
	for j, id := range l.Patch {
		if first, dup := seen[id]; dup {
			return &DuplicateError{Identity: id, First: first, Second: j}
		}
		seen[id] = j
	}
	return nil
}

// checkOrder enforces the two requirements on $setElementOrder: the patch
// items are a subsequence of the directive's entries, so every patch item is
// listed and their relative order agrees. strata also rejects an empty
// directive beside a non-empty patch list; apimachinery accepts it.
func checkOrder(l List, mode Mode) error {
	if len(l.Patch) == 0 {
		return nil
	}
	if len(l.Order) == 0 {
		if mode == Kubernetes {
			return nil
		}
		return &OrderError{PatchIndex: 0, Identity: l.Patch[0], Empty: true}
	}
	o := 0
	for j, id := range l.Patch {
		for o < len(l.Order) && l.Order[o] != id {
			o++
		}
		if o == len(l.Order) {
			return &OrderError{PatchIndex: j, Identity: id, Unlisted: !slices.Contains(l.Order, id)}
		}
		o++
	}
	return nil
}

// JoinKey combines the identities of a multi-field merge key's values into one
// identity; each part is length-prefixed, so no two tuples collide.
func JoinKey(parts []string) string {
	if len(parts) == 1 {
		return parts[0]
	}
	n := 0
	for _, p := range parts {
		n += len(p) + 4
	}
	b := make([]byte, 0, n)
	for _, p := range parts {
		b = strconv.AppendInt(b, int64(len(p)), 10)
		b = append(b, ':')
		b = append(b, p...)
	}
	return string(b)
}
