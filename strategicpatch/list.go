package strategicpatch

import (
	"strings"

	"github.com/stratadev/strata/listorder"
	"github.com/stratadev/strata/schema"
)

// listInput is everything a patch says about one list field.
type listInput[N any] struct {
	live     N
	hasLive  bool
	patch    N
	hasPatch bool
	order    N // $setElementOrder/<field>
	hasOrder bool
	del      N // $deleteFromPrimitiveList/<field>
	hasDel   bool
}

// mergeListField writes a list field that $setElementOrder or
// $deleteFromPrimitiveList names, after checking the directives fit it.
func (e *engine[N, R, W]) mergeListField(t schema.Type, key string, keyNode N, in listInput[N]) error {
	f, err := e.field(t, key, true)
	if err != nil {
		return err
	}
	if e.compat() {
		return e.mergeListFieldCompat(f, keyNode, in)
	}
	if err := e.checkDirectiveTarget(f, in); err != nil {
		return err
	}
	e.w.key(keyNode)
	return e.mergeList(f, in)
}

// checkDirectiveTarget rejects list directives aimed at something that is not
// a merge list, and directive values that are not lists.
func (e *engine[N, R, W]) checkDirectiveTarget(f schema.Field, in listInput[N]) error {
	name := "$deleteFromPrimitiveList"
	if in.hasOrder {
		name = "$setElementOrder"
	}
	if !f.Strategy.Has(schema.Merge) {
		return e.path.errorf(ErrInvalidDirective, "%s needs a merge list, but the schema gives this field no merge strategy", name)
	}
	if in.hasOrder && e.r.kind(in.order) != List {
		return e.path.errorf(ErrInvalidDirective, "$setElementOrder is %s, want a list", e.describe(in.order))
	}
	if in.hasDel && e.r.kind(in.del) != List {
		return e.path.errorf(ErrInvalidDirective, "$deleteFromPrimitiveList is %s, want a list", e.describe(in.del))
	}
	if in.hasLive && e.r.kind(in.live) != List {
		return e.path.errorf(ErrType, "the document has %s here, but %s names a list", e.describe(in.live), name)
	}
	if in.hasPatch && e.r.kind(in.patch) != List {
		return e.path.errorf(ErrType, "the patch has %s here, but %s names a list", e.describe(in.patch), name)
	}
	return nil
}

// checkListDirectives validates directives naming a list that neither the
// document nor the patch has; there is nothing to write.
func (e *engine[N, R, W]) checkListDirectives(pm *patchMap[N], t schema.Type, key string) error {
	e.path.pushField(key)
	defer e.path.pop()
	f, err := e.field(t, key, true)
	if err != nil {
		return err
	}
	order, hasOrder := findEntry(pm.orders, key)
	del, hasDel := findEntry(pm.deletes, key)
	if e.compat() {
		if hasOrder && e.r.kind(order) != List {
			return e.path.errorf(ErrInvalidDirective, "$setElementOrder is %s, want a list", e.describe(order))
		}
		return nil
	}
	return e.checkDirectiveTarget(f, listInput[N]{order: order, hasOrder: hasOrder, del: del, hasDel: hasDel})
}

// mergeList writes a merge list: live items, patch items and directives
// combined in the order listorder plans.
func (e *engine[N, R, W]) mergeList(f schema.Field, in listInput[N]) error {
	if e.depth++; e.depth > MaxDepth {
		return e.path.errorf(ErrSyntax, "nesting deeper than %d levels", MaxDepth)
	}
	defer func() { e.depth-- }()
	maps, err := e.elementKind(in)
	if err != nil {
		return err
	}
	if e.compat() && !maps && len(f.MergeKeys) > 0 && (in.hasPatch || in.hasOrder) {
		// apimachinery partitions the merged items as maps by their merge
		// key, whatever they are.
		if (in.hasLive && e.r.count(in.live) > 0) || (in.hasPatch && e.r.count(in.patch) > 0) {
			return e.path.errorf(ErrType, "the list has merge key %s, but holds values that are not maps", strings.Join(f.MergeKeys, ","))
		}
	}
	var keys []string
	if maps {
		if keys = f.MergeKeys; len(keys) == 0 {
			return e.path.errorf(ErrMissingMergeKey, "the list holds maps and has a merge strategy, but the schema gives no merge key")
		}
	}
	var elem schema.Type
	if f.Type != nil {
		elem = f.Type.Elem()
	}
	lm := listMerge[N, R, W]{e: e, keys: keys, elem: elem, in: in}
	if err := lm.read(); err != nil {
		return err
	}
	if lm.replace {
		return lm.writeReplaced()
	}
	slots, err := listorder.Plan(lm.plan, e.mode)
	if err != nil {
		return lm.planError(err)
	}
	return lm.write(slots)
}

// elementKind tells whether a merge list holds maps, rejecting lists that mix
// maps with other values or hold lists.
func (e *engine[N, R, W]) elementKind(in listInput[N]) (maps bool, err error) {
	var first Kind
	seen := false
	check := func(n N) bool {
		k := e.r.kind(n)
		if k == List {
			err = e.path.errorf(ErrType, "a merge list cannot hold lists")
			return false
		}
		if !seen {
			first, seen = k, true
			return true
		}
		if (k == Map) != (first == Map) || (e.compat() && k != first) {
			err = e.path.errorf(ErrType, "the list mixes %s and %s items", first, k)
			return false
		}
		return true
	}
	if in.hasLive {
		e.r.items(in.live, check)
	}
	if err == nil && in.hasPatch {
		e.r.items(in.patch, check)
	}
	return seen && first == Map, err
}
