package strategicpatch

import (
	"github.com/stratadev/strata/listorder"
	"github.com/stratadev/strata/schema"
)

// MaxDepth is the deepest nesting of maps and lists a patch may reach.
const MaxDepth = 1000

// engine applies one patch. It reads both documents through r and writes the
// result through w; the inputs are never modified.
type engine[N any, R reader[N], W writer[N]] struct {
	r R
	w W
	// mode is whose list rules apply; listorder.Kubernetes also selects
	// apimachinery's other behaviours (compat).
	mode  listorder.Mode
	path  path
	depth int
	// rootType is the schema of the document's root map.
	rootType schema.Type
}

// compat says whether the patch is applied by apimachinery's rules.
func (e *engine[N, R, W]) compat() bool { return e.mode == listorder.Kubernetes }

// applyRoot merges patch into live, both root values of their documents.
func (e *engine[N, R, W]) applyRoot(live, patch N) error {
	hasLive := true
	switch e.r.kind(live) {
	case Map:
	case Null:
		hasLive = false
	default:
		return e.path.errorf(ErrType, "the document is %s, want a map", e.describe(live))
	}
	switch e.r.kind(patch) {
	case Map:
	case Null:
		if hasLive {
			e.w.copy(live)
		} else {
			e.w.beginMap(live)
			e.w.endMap()
		}
		return nil
	default:
		return e.path.errorf(ErrType, "the patch is %s, want a map", e.describe(patch))
	}
	pm, err := e.readPatchMap(patch)
	if err != nil {
		return err
	}
	if pm.directive == directiveDelete {
		e.w.beginMap(live)
		e.w.endMap()
		return nil
	}
	return e.mergeMapDirective(live, hasLive, pm, e.rootType)
}

// mergeMapDirective merges a patch map that may carry a $patch directive.
func (e *engine[N, R, W]) mergeMapDirective(live N, hasLive bool, pm *patchMap[N], t schema.Type) error {
	switch pm.directive {
	case directiveReplace:
		if e.compat() {
			e.copyWithout(pm.node, patchKey)
			return nil
		}
		return e.mergeMap(live, false, pm, t)
	case directiveDelete:
		e.w.beginMap(pm.node)
		e.w.endMap()
		return nil
	case directiveMerge:
		// Seed 002: "merge directive is used only in the go struct tags".
		return e.path.errorf(ErrInvalidDirective, "$patch: merge is not allowed in a patch (merge is a patchStrategy of struct tags, not a directive)")
	}
	return e.mergeMap(live, hasLive, pm, t)
}

// mergeMap writes live (if any) merged with patch map pm: live members in
// their order, then members only the patch has, in its order.
func (e *engine[N, R, W]) mergeMap(live N, hasLive bool, pm *patchMap[N], t schema.Type) error {
	if e.depth++; e.depth > MaxDepth {
		return e.path.errorf(ErrSyntax, "nesting deeper than %d levels", MaxDepth)
	}
	defer func() { e.depth-- }()
	if err := e.checkRetainKeys(pm); err != nil {
		return err
	}
	used := make([]bool, len(pm.entries))
	if hasLive {
		e.w.beginMap(live)
	} else {
		e.w.beginMap(pm.node)
	}
	var err error
	if hasLive {
		e.r.members(live, func(key string, keyNode, val N) bool {
			if pm.hasRetain && !pm.retain[key] {
				return true
			}
			err = e.mergeLiveMember(pm, used, t, key, keyNode, val)
			return err == nil
		})
		if err != nil {
			return err
		}
	}
	for i, en := range pm.entries {
		if used[i] {
			continue
		}
		var none N
		if err := e.mergeField(pm, t, en.key, en.keyNode, none, false, en.val, true); err != nil {
			return err
		}
	}
	if err := e.checkDirectivesWithoutList(pm, hasLive, live, t); err != nil {
		return err
	}
	e.w.endMap()
	return nil
}

func (e *engine[N, R, W]) mergeLiveMember(pm *patchMap[N], used []bool, t schema.Type, key string, keyNode, val N) error {
	i := pm.find(key)
	if i < 0 {
		if e.hasListDirective(pm, key) {
			var none N
			return e.mergeField(pm, t, key, keyNode, val, true, none, false)
		}
		e.w.key(keyNode)
		e.w.copy(val)
		return nil
	}
	if used[i] {
		return e.path.errorf(ErrSyntax, "key %q appears twice in the document", key)
	}
	used[i] = true
	return e.mergeField(pm, t, key, keyNode, val, true, pm.entries[i].val, true)
}

func (e *engine[N, R, W]) hasListDirective(pm *patchMap[N], key string) bool {
	_, o := findEntry(pm.orders, key)
	_, d := findEntry(pm.deletes, key)
	return o || d
}

// checkDirectivesWithoutList validates the list directives naming a field
// that neither the live map nor the patch has: there is no list to write,
// but a malformed directive is still an error.
func (e *engine[N, R, W]) checkDirectivesWithoutList(pm *patchMap[N], hasLive bool, live N, t schema.Type) error {
	for _, directives := range [2][]entry[N]{pm.orders, pm.deletes} {
		for _, d := range directives {
			if pm.find(d.key) >= 0 {
				continue
			}
			if hasLive {
				if _, inLive := e.r.lookup(live, d.key); inLive {
					continue
				}
			}
			if err := e.checkListDirectives(pm, t, d.key); err != nil {
				return err
			}
		}
	}
	return nil
}

// field looks up a field's metadata. In Kubernetes mode a field the schema
// does not have is an error where apimachinery gives one: when a map or a
// list is merged into the field.
func (e *engine[N, R, W]) field(t schema.Type, key string, merging bool) (schema.Field, error) {
	if t == nil {
		return schema.Field{}, nil
	}
	f, ok := t.Field(key)
	if !ok && e.compat() && merging {
		return f, e.path.errorf(ErrSchema, "type %s has no field %q", t.Name(), key)
	}
	return f, nil
}

// mergeField writes member key: live value and patch value, either absent.
func (e *engine[N, R, W]) mergeField(pm *patchMap[N], t schema.Type, key string, keyNode, live N, hasLive bool, patch N, hasPatch bool) error {
	e.path.pushField(key)
	defer e.path.pop()
	order, hasOrder := findEntry(pm.orders, key)
	del, hasDel := findEntry(pm.deletes, key)
	if hasPatch && e.r.kind(patch) == Null {
		return nil // null deletes the field
	}
	lk, pk := e.kindOf(live, hasLive), e.kindOf(patch, hasPatch)
	if hasOrder || hasDel {
		return e.mergeListField(t, key, keyNode, listInput[N]{
			live: live, hasLive: hasLive, patch: patch, hasPatch: hasPatch,
			order: order, hasOrder: hasOrder, del: del, hasDel: hasDel,
		})
	}
	if !hasPatch {
		e.w.key(keyNode)
		e.w.copy(live)
		return nil
	}
	if e.compat() {
		return e.mergeFieldCompat(t, key, keyNode, live, hasLive, patch, lk, pk)
	}
	if pk == Map && e.isDeleteMap(patch) {
		return nil // $patch: delete removes the field
	}
	f, err := e.field(t, key, false)
	if err != nil {
		return err
	}
	switch {
	case hasLive && lk == Map && pk == Map && !f.Strategy.Has(schema.Replace):
		pm, err := e.readPatchMap(patch)
		if err != nil {
			return err
		}
		e.w.key(keyNode)
		return e.mergeMapDirective(live, true, pm, f.Type)
	case hasLive && lk == List && pk == List && f.Strategy.Has(schema.Merge):
		e.w.key(keyNode)
		return e.mergeList(f, listInput[N]{live: live, hasLive: true, patch: patch, hasPatch: true})
	}
	e.w.key(keyNode)
	return e.newValue(patch, f, live, hasLive)
}

func (e *engine[N, R, W]) kindOf(n N, present bool) Kind {
	if !present {
		return Null
	}
	return e.r.kind(n)
}

// isDeleteMap reports whether map n carries $patch: delete.
func (e *engine[N, R, W]) isDeleteMap(n N) bool {
	d, ok := e.r.lookup(n, patchKey)
	return ok && e.r.kind(d) == String && e.r.text(d) == directiveDelete
}

// newValue writes a patch value that has no live counterpart to merge with:
// it is merged into nothing, so its directives are obeyed and its nulls drop.
func (e *engine[N, R, W]) newValue(patch N, f schema.Field, like N, hasLike bool) error {
	switch e.r.kind(patch) {
	case Map:
		pm, err := e.readPatchMap(patch)
		if err != nil {
			return err
		}
		var none N
		return e.mergeMapDirective(none, false, pm, f.Type)
	case List:
		if f.Strategy.Has(schema.Merge) {
			return e.mergeList(f, listInput[N]{patch: patch, hasPatch: true})
		}
		return e.replaceList(patch, f.Type)
	}
	e.w.scalar(patch, like, hasLike)
	return nil
}

// replaceList writes a patch list that replaces the live one. Its maps are
// new values; a $patch marker element is dropped, except delete, which only
// a merge list can obey.
func (e *engine[N, R, W]) replaceList(patch N, elem schema.Type) error {
	if e.depth++; e.depth > MaxDepth {
		return e.path.errorf(ErrSyntax, "nesting deeper than %d levels", MaxDepth)
	}
	defer func() { e.depth-- }()
	e.w.beginList(patch)
	var err error
	i := 0
	e.r.items(patch, func(item N) bool {
		e.path.pushIndex(i)
		defer e.path.pop()
		i++
		if e.r.kind(item) == Map {
			if d, ok := e.r.lookup(item, patchKey); ok {
				if e.r.kind(d) == String && e.r.text(d) == directiveDelete {
					err = e.path.errorf(ErrInvalidDirective, "$patch: delete in a list that is not a merge list (the schema gives no merge strategy)")
				}
				return err == nil
			}
		}
		err = e.newValue(item, schema.Field{Type: elem}, item, false)
		return err == nil
	})
	if err != nil {
		return err
	}
	e.w.endList()
	return nil
}

// copyWithout writes map n without the member named skip.
func (e *engine[N, R, W]) copyWithout(n N, skip string) {
	e.w.beginMap(n)
	e.r.members(n, func(key string, keyNode, val N) bool {
		if key != skip {
			e.w.key(keyNode)
			e.w.copy(val)
		}
		return true
	})
	e.w.endMap()
}
