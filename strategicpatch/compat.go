package strategicpatch

import "github.com/stratadev/strata/schema"

// This file holds the Kubernetes compatibility mode's departures from strata's
// own rules, where apimachinery's strategicpatch treats values differently.

// mergeFieldCompat is mergeField as apimachinery's mergeMap does it.
func (e *engine[N, R, W]) mergeFieldCompat(t schema.Type, key string, keyNode, live N, hasLive bool, patch N, lk, pk Kind) error {
	if !hasLive || lk != pk {
		// Not in the live document, or of another type: the patch value is
		// taken without its nulls and its $patch maps.
		if pk == Map && e.hasMarker(patch) {
			return nil
		}
		e.w.key(keyNode)
		e.compatNew(patch, true)
		return nil
	}
	switch pk {
	case Map:
		f, err := e.field(t, key, true)
		if err != nil {
			return err
		}
		e.w.key(keyNode)
		if f.Strategy.Has(schema.Replace) {
			e.w.copy(patch)
			return nil
		}
		pm, err := e.readPatchMap(patch)
		if err != nil {
			return err
		}
		return e.mergeMapDirective(live, true, pm, f.Type)
	case List:
		f, err := e.field(t, key, true)
		if err != nil {
			return err
		}
		e.w.key(keyNode)
		if !f.Strategy.Has(schema.Merge) {
			e.w.copy(patch)
			return nil
		}
		return e.mergeList(f, listInput[N]{live: live, hasLive: true, patch: patch, hasPatch: true})
	}
	e.w.key(keyNode)
	e.w.scalar(patch, live, true)
	return nil
}

// mergeListFieldCompat handles $setElementOrder and $deleteFromPrimitiveList
// as apimachinery does, for the cases where its result does not depend on map
// iteration order.
func (e *engine[N, R, W]) mergeListFieldCompat(f schema.Field, keyNode N, in listInput[N]) error {
	if in.hasOrder {
		if err := e.checkDirectiveTarget(f, in); err != nil {
			return err
		}
		if (!in.hasLive || e.r.count(in.live) == 0) && (!in.hasPatch || e.r.count(in.patch) == 0) {
			// apimachinery's sliceElementType finds no element to type the list by.
			return e.path.errorf(ErrType, "$setElementOrder names a list that has no elements in the document or the patch")
		}
		e.w.key(keyNode)
		return e.mergeList(f, in)
	}
	// Only $deleteFromPrimitiveList: it applies whatever the strategy.
	if e.r.kind(in.del) == Null && !in.hasPatch {
		return nil // a null deletion list removes the live list
	}
	if in.hasPatch && in.hasLive && !(e.r.kind(in.live) == List && e.r.kind(in.patch) == List && f.Strategy.Has(schema.Merge)) {
		return e.path.errorf(ErrInvalidDirective, "$deleteFromPrimitiveList beside a list the patch replaces")
	}
	if !in.hasLive {
		if !in.hasPatch {
			return nil
		}
		in.hasDel = false
		return e.mergeFieldCompat(nil, "", keyNode, in.live, false, in.patch, Null, e.r.kind(in.patch))
	}
	if e.r.kind(in.live) != List || e.r.kind(in.del) != List {
		e.w.key(keyNode)
		e.w.copy(in.live)
		return nil
	}
	f.Strategy |= schema.Merge
	e.w.key(keyNode)
	return e.mergeList(f, in)
}

// hasMarker reports whether map n has a $patch member, whatever its value.
func (e *engine[N, R, W]) hasMarker(n N) bool {
	_, ok := e.r.lookup(n, patchKey)
	return ok
}

// compatNew writes a patch value the way apimachinery stores a value that has
// nothing to merge with: maps carrying $patch are dropped (from maps and from
// lists), null members of maps are dropped when discardNulls is set, and every
// other directive stays as written.
func (e *engine[N, R, W]) compatNew(n N, discardNulls bool) {
	switch e.r.kind(n) {
	case Map:
		e.w.beginMap(n)
		e.r.members(n, func(key string, keyNode, val N) bool {
			vk := e.r.kind(val)
			if (vk == Null && discardNulls) || (vk == Map && e.hasMarker(val)) {
				return true
			}
			e.w.key(keyNode)
			e.compatNew(val, discardNulls)
			return true
		})
		e.w.endMap()
	case List:
		e.w.beginList(n)
		e.r.items(n, func(item N) bool {
			if e.r.kind(item) == Map && e.hasMarker(item) {
				return true
			}
			e.compatNew(item, discardNulls)
			return true
		})
		e.w.endList()
	default:
		e.w.copy(n)
	}
}
