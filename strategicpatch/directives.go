package strategicpatch

import "strings"

// The directive keys of a strategic merge patch.
const (
	patchKey         = "$patch"
	retainKeysKey    = "$retainKeys"
	orderPrefix      = "$setElementOrder/"
	deletePrefix     = "$deleteFromPrimitiveList/"
	directiveReplace = "replace"
	directiveDelete  = "delete"
	directiveMerge   = "merge"
)

// entry is one member of a patch map.
type entry[N any] struct {
	key     string
	keyNode N
	val     N
}

// patchMap is a patch map read once: its ordinary members indexed by key, and
// its directives pulled out.
type patchMap[N any] struct {
	node      N
	entries   []entry[N]
	index     map[string]int // key -> entries index, for maps too big to scan
	directive string         // the value of $patch, "" when absent
	hasRetain bool
	retain    map[string]bool
	orders    []entry[N] // $setElementOrder/<key>, key without the prefix
	deletes   []entry[N] // $deleteFromPrimitiveList/<key>, key without the prefix
}

const scanLimit = 8 // maps with more members than this are indexed by key

func (m *patchMap[N]) find(key string) int {
	if m.index != nil {
		if i, ok := m.index[key]; ok {
			return i
		}
		return -1
	}
	for i := range m.entries {
		if m.entries[i].key == key {
			return i
		}
	}
	return -1
}

func findEntry[N any](list []entry[N], key string) (N, bool) {
	for _, e := range list {
		if e.key == key {
			return e.val, true
		}
	}
	var zero N
	return zero, false
}

// readPatchMap classifies the members of patch map n. Unknown directives are
// rejected, except in Kubernetes mode, where apimachinery keeps them as
// ordinary fields.
func (e *engine[N, R, W]) readPatchMap(n N) (*patchMap[N], error) {
	pm := &patchMap[N]{node: n}
	if c := e.r.count(n); c > 0 {
		pm.entries = make([]entry[N], 0, c)
	}
	var err error
	e.r.members(n, func(key string, keyNode, val N) bool {
		err = e.classify(pm, key, keyNode, val)
		return err == nil
	})
	if err != nil {
		return nil, err
	}
	if dup, ok := pm.indexEntries(); !ok {
		return nil, e.path.errorf(ErrSyntax, "key %q appears twice in the patch", dup)
	}
	return pm, nil
}

// indexEntries indexes a large map's members by key, and reports the first
// key that appears twice (small maps are checked by scanning).
func (m *patchMap[N]) indexEntries() (dup string, ok bool) {
	if len(m.entries) <= scanLimit {
		for i := 1; i < len(m.entries); i++ {
			for _, prev := range m.entries[:i] {
				if prev.key == m.entries[i].key {
					return prev.key, false
				}
			}
		}
		return "", true
	}
	m.index = make(map[string]int, len(m.entries))
	for i, en := range m.entries {
		if _, seen := m.index[en.key]; seen {
			return en.key, false
		}
		m.index[en.key] = i
	}
	return "", true
}

func (e *engine[N, R, W]) classify(pm *patchMap[N], key string, keyNode, val N) error {
	if !strings.HasPrefix(key, "$") {
		pm.entries = append(pm.entries, entry[N]{key, keyNode, val})
		return nil
	}
	switch {
	case key == patchKey:
		return e.readPatchDirective(pm, val)
	case key == retainKeysKey:
		return e.readRetainKeys(pm, val)
	case strings.HasPrefix(key, orderPrefix) && len(key) > len(orderPrefix):
		pm.orders = append(pm.orders, entry[N]{key[len(orderPrefix):], keyNode, val})
		return nil
	case strings.HasPrefix(key, deletePrefix) && len(key) > len(deletePrefix):
		pm.deletes = append(pm.deletes, entry[N]{key[len(deletePrefix):], keyNode, val})
		return nil
	case e.compat() && !strings.HasPrefix(key, "$setElementOrder") && !strings.HasPrefix(key, "$deleteFromPrimitiveList"):
		pm.entries = append(pm.entries, entry[N]{key, keyNode, val})
		return nil
	}
	return e.path.errorf(ErrInvalidDirective, "unknown directive %q (want $patch, $retainKeys, $setElementOrder/<list> or $deleteFromPrimitiveList/<list>)", key)
}

func (e *engine[N, R, W]) readPatchDirective(pm *patchMap[N], val N) error {
	if e.r.kind(val) == String {
		switch d := e.r.text(val); d {
		case directiveReplace, directiveDelete, directiveMerge:
			pm.directive = d
			return nil
		}
	}
	return e.path.errorf(ErrInvalidDirective, "$patch is %s, want replace, delete or merge", e.describe(val))
}

func (e *engine[N, R, W]) readRetainKeys(pm *patchMap[N], val N) error {
	if e.r.kind(val) != List {
		return e.path.errorf(ErrInvalidDirective, "$retainKeys is %s, want a list of field names", e.describe(val))
	}
	pm.hasRetain = true
	pm.retain = make(map[string]bool, e.r.count(val))
	var err error
	e.r.items(val, func(item N) bool {
		if e.r.kind(item) != String {
			if e.compat() {
				return true // apimachinery compares values; a non-string never matches a key
			}
			err = e.path.errorf(ErrInvalidDirective, "$retainKeys holds %s, want field names", e.describe(item))
			return false
		}
		pm.retain[e.r.text(item)] = true
		return true
	})
	return err
}

// checkRetainKeys enforces that every field a patch sets is retained.
func (e *engine[N, R, W]) checkRetainKeys(pm *patchMap[N]) error {
	if !pm.hasRetain {
		return nil
	}
	for _, en := range pm.entries {
		if e.r.kind(en.val) != Null && !pm.retain[en.key] {
			return e.path.errorf(ErrInvalidDirective, "field %q is set by the patch but not listed in $retainKeys", en.key)
		}
	}
	return nil
}

// describe names a value's kind and, for scalars, its text, for messages.
func (e *engine[N, R, W]) describe(n N) string {
	k := e.r.kind(n)
	if k.scalar() {
		return k.String() + " " + e.r.identity(n)
	}
	return "a " + k.String()
}
