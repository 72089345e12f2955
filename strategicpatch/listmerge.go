package strategicpatch

import (
	"errors"
	"strings"

	"github.com/stratadev/strata/listorder"
	"github.com/stratadev/strata/schema"
)

// listMerge reads the items of one merge list and writes the merged list.
type listMerge[N any, R reader[N], W writer[N]] struct {
	e       *engine[N, R, W]
	keys    []string // merge key fields; empty for a list of primitives
	elem    schema.Type
	in      listInput[N]
	live    []N
	patch   []N // patch items, directive elements excluded
	replace bool
	plan    listorder.List
	// seq is, in Kubernetes mode, the patch list without its $patch: delete
	// elements: indexes into patch, -1 for other $patch elements.
	seq []int32
	// keyless is, in Kubernetes mode, the first live element's missing or
	// non-primitive merge key: apimachinery replaces a list ($patch:
	// replace) before it reads the live elements' keys, so it is an error
	// only once the patch turns out not to replace the list.
	keyless error
}

func (lm *listMerge[N, R, W]) read() error {
	lm.plan.Set = len(lm.keys) == 0
	if lm.in.hasLive {
		if err := lm.readLive(); err != nil {
			return err
		}
	}
	if lm.in.hasPatch {
		if err := lm.readPatch(); err != nil {
			return err
		}
	}
	if lm.keyless != nil && !lm.replace {
		return lm.keyless
	}
	if lm.in.hasDel {
		if err := lm.readDeletes(); err != nil {
			return err
		}
	}
	if lm.in.hasOrder {
		if err := lm.readOrder(); err != nil {
			return err
		}
		if lm.e.compat() {
			return lm.checkOrderCompat()
		}
	}
	return nil
}

// checkOrderCompat is apimachinery's validatePatchWithSetOrderList: patch
// items must follow $setElementOrder's order, and a $patch element (replace)
// left over once the directive's entries run out breaks the order too.
func (lm *listMerge[N, R, W]) checkOrderCompat() error {
	order := lm.plan.Order
	if len(order) == 0 || len(lm.seq) == 0 {
		return nil
	}
	p, o := 0, 0
	for p < len(lm.seq) && o < len(order) {
		if lm.seq[p] < 0 {
			p++
			continue
		}
		if lm.plan.Patch[lm.seq[p]] == order[o] {
			p++
		}
		o++
	}
	if p < len(lm.seq) {
		if lm.seq[p] < 0 {
			return lm.e.path.errorf(ErrOrder, "item %d of the patch list ($patch) comes after the last $setElementOrder entry", p)
		}
		return lm.e.path.errorf(ErrOrder, "%s is not in $setElementOrder in the patch list's order", lm.patchName(int(lm.seq[p])))
	}
	return nil
}

func (lm *listMerge[N, R, W]) readLive() error {
	e := lm.e
	n := e.r.count(lm.in.live)
	lm.live = make([]N, 0, n)
	lm.plan.Live = make([]string, 0, n)
	var err error
	e.r.items(lm.in.live, func(item N) bool {
		id, ok, ierr := lm.identity(item)
		if e.compat() && !lm.plan.Set && e.r.kind(item) == Map && (ierr != nil || !ok) {
			lm.noteKeyless(len(lm.live), ierr)
			ierr, ok = nil, false
		}
		switch {
		case ierr != nil:
			err = ierr
		case !ok:
			id = listorder.NoIdentity
		}
		lm.live = append(lm.live, item)
		lm.plan.Live = append(lm.plan.Live, id)
		return err == nil
	})
	return err
}

// noteKeyless keeps the first live element whose merge key is missing (nil
// keyErr) or not primitive (see keyless).
func (lm *listMerge[N, R, W]) noteKeyless(i int, keyErr error) {
	if lm.keyless != nil {
		return
	}
	if keyErr == nil {
		keyErr = lm.e.path.errorf(ErrMissingMergeKey, "item %d of the document's list lacks merge key %s", i, strings.Join(lm.keys, ","))
	}
	lm.keyless = keyErr
}

func (lm *listMerge[N, R, W]) readPatch() error {
	e := lm.e
	var err error
	j := 0
	e.r.items(lm.in.patch, func(item N) bool {
		defer func() { j++ }()
		if !lm.plan.Set {
			if d, ok := e.r.lookup(item, patchKey); ok {
				err = lm.readSpecial(item, d, j)
				if e.compat() && !(e.r.kind(d) == String && e.r.text(d) == directiveDelete) {
					lm.seq = append(lm.seq, -1)
				}
				return err == nil
			}
		}
		id, ok, ierr := lm.identity(item)
		if ierr == nil && !ok {
			ierr = e.path.errorf(ErrMissingMergeKey, "item %d of the patch list lacks merge key %s", j, strings.Join(lm.keys, ","))
		}
		if err = ierr; err != nil {
			return false
		}
		if e.compat() {
			lm.seq = append(lm.seq, int32(len(lm.patch)))
		}
		lm.patch = append(lm.patch, item)
		lm.plan.Patch = append(lm.plan.Patch, id)
		return true
	})
	return err
}

// readSpecial obeys a patch list element carrying $patch.
func (lm *listMerge[N, R, W]) readSpecial(item, directive N, j int) error {
	e := lm.e
	d := ""
	if e.r.kind(directive) == String {
		d = e.r.text(directive)
	}
	switch d {
	case directiveDelete:
		id, ok, err := lm.identity(item)
		if err != nil {
			return err
		}
		if !ok {
			return e.path.errorf(ErrMissingMergeKey, "item %d of the patch list ($patch: delete) lacks merge key %s", j, strings.Join(lm.keys, ","))
		}
		lm.plan.Deleted = append(lm.plan.Deleted, id)
	case directiveReplace:
		lm.replace = true
	case directiveMerge:
		return e.path.errorf(ErrInvalidDirective, "item %d: $patch: merge is not allowed in a list", j)
	default:
		return e.path.errorf(ErrInvalidDirective, "item %d: $patch is %s, want replace or delete", j, e.describe(directive))
	}
	return nil
}

func (lm *listMerge[N, R, W]) readDeletes() error {
	e := lm.e
	if !lm.plan.Set {
		return e.path.errorf(ErrInvalidDirective, "$deleteFromPrimitiveList names a list of maps; delete its elements with $patch: delete")
	}
	var err error
	e.r.items(lm.in.del, func(item N) bool {
		if !e.r.kind(item).scalar() {
			err = e.path.errorf(ErrInvalidDirective, "$deleteFromPrimitiveList holds %s, want primitive values", e.describe(item))
			return false
		}
		lm.plan.Deleted = append(lm.plan.Deleted, e.r.identity(item))
		return true
	})
	return err
}

func (lm *listMerge[N, R, W]) readOrder() error {
	e := lm.e
	lm.plan.HasOrder = true
	var err error
	i := 0
	e.r.items(lm.in.order, func(item N) bool {
		defer func() { i++ }()
		id, ok, ierr := lm.identity(item)
		if ierr == nil && !ok {
			ierr = e.path.errorf(ErrMissingMergeKey, "entry %d of $setElementOrder lacks merge key %s", i, strings.Join(lm.keys, ","))
		}
		if err = ierr; err != nil {
			return false
		}
		lm.plan.Order = append(lm.plan.Order, id)
		return true
	})
	return err
}

// identity of an item: its value for primitives, its merge-key values for
// maps (ok is false when a key field is missing).
func (lm *listMerge[N, R, W]) identity(item N) (id string, ok bool, err error) {
	e := lm.e
	k := e.r.kind(item)
	if lm.plan.Set {
		if !k.scalar() {
			return "", false, e.path.errorf(ErrType, "a list of primitives holds %s", e.describe(item))
		}
		return e.r.identity(item), true, nil
	}
	if k != Map {
		return "", false, e.path.errorf(ErrType, "a list of maps holds %s", e.describe(item))
	}
	if len(lm.keys) == 1 {
		return lm.keyValue(item, lm.keys[0])
	}
	parts := make([]string, len(lm.keys))
	for i, key := range lm.keys {
		v, ok, err := lm.keyValue(item, key)
		if !ok || err != nil {
			return "", ok, err
		}
		parts[i] = v
	}
	return listorder.JoinKey(parts), true, nil
}

func (lm *listMerge[N, R, W]) keyValue(item N, key string) (string, bool, error) {
	e := lm.e
	v, ok := e.r.lookup(item, key)
	if !ok || (e.r.kind(v) == Null && !e.compat()) {
		return "", false, nil // a null key identifies nothing: it counts as missing
	}
	if !e.r.kind(v).scalar() {
		return "", false, e.path.errorf(ErrType, "merge key %s is %s, want a primitive value", key, e.describe(v))
	}
	return e.r.identity(v), true, nil
}

func (lm *listMerge[N, R, W]) keyText(item N) string { return keyText(lm.e.r, item, lm.keys) }

func (lm *listMerge[N, R, W]) planError(err error) error {
	e := lm.e
	var dup *listorder.DuplicateError
	var ord *listorder.OrderError
	switch {
	case errors.As(err, &dup):
		return e.path.errorf(ErrDuplicateMergeKey, "items %d and %d of the patch list are both %s", dup.First, dup.Second, lm.patchName(dup.Second))
	case errors.As(err, &ord):
		return e.path.errorf(ErrOrder, "%s", strings.Replace(ord.Error(), ord.Identity, lm.patchName(ord.PatchIndex), 1))
	}
	return e.path.errorf(ErrOrder, "%v", err)
}

func (lm *listMerge[N, R, W]) patchName(j int) string {
	if lm.plan.Set {
		return lm.plan.Patch[j]
	}
	return lm.keyText(lm.patch[j])
}

// keyText names a list element by its merge key for paths and messages:
// "name=web", "port=80,protocol=TCP".
func keyText[N any, R reader[N]](r R, item N, keys []string) string {
	parts := make([]string, 0, len(keys))
	for _, key := range keys {
		if v, ok := r.lookup(item, key); ok {
			if r.kind(v) == String {
				parts = append(parts, key+"="+r.text(v))
			} else {
				parts = append(parts, key+"="+r.identity(v))
			}
		}
	}
	return strings.Join(parts, ",")
}
