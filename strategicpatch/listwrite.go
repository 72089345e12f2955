package strategicpatch

import (
	"github.com/stratadev/strata/listorder"
	"github.com/stratadev/strata/schema"
)

// write emits the merged list slot by slot.
func (lm *listMerge[N, R, W]) write(slots []listorder.Slot) error {
	e := lm.e
	lm.beginList()
	for _, s := range slots {
		var err error
		switch {
		case s.Patch < 0:
			e.w.copy(lm.live[s.Live])
		case lm.plan.Set:
			if s.Live >= 0 {
				e.w.copy(lm.live[s.Live])
			} else {
				e.w.copy(lm.patch[s.Patch])
			}
		case s.Live < 0:
			err = lm.writeNewItem(lm.patch[s.Patch])
		default:
			err = lm.mergeItem(lm.live[s.Live], lm.patch[s.Patch])
		}
		if err != nil {
			return err
		}
	}
	e.w.endList()
	return nil
}

func (lm *listMerge[N, R, W]) beginList() {
	switch {
	case lm.in.hasLive:
		lm.e.w.beginList(lm.in.live)
	case lm.in.hasPatch:
		lm.e.w.beginList(lm.in.patch)
	default:
		lm.e.w.beginList(lm.in.order)
	}
}

// mergeItem merges a patch element into the live element it matched.
func (lm *listMerge[N, R, W]) mergeItem(live, patch N) error {
	e := lm.e
	e.path.pushKeyed(lm.keyText(patch))
	defer e.path.pop()
	pm, err := e.readPatchMap(patch)
	if err != nil {
		return err
	}
	return e.mergeMap(live, true, pm, lm.elem)
}

// writeNewItem writes a patch element that matched no live element.
// apimachinery appends such an element as it is when the live list exists.
func (lm *listMerge[N, R, W]) writeNewItem(patch N) error {
	e := lm.e
	e.path.pushKeyed(lm.keyText(patch))
	defer e.path.pop()
	if e.compat() {
		if lm.in.hasLive {
			e.w.copy(patch)
		} else {
			e.compatNew(patch, false)
		}
		return nil
	}
	return e.newValue(patch, schema.Field{Type: lm.elem}, patch, false)
}

// writeReplaced writes the list a `$patch: replace` element replaces the live
// list with: the patch's other elements, in $setElementOrder's order if given.
func (lm *listMerge[N, R, W]) writeReplaced() error {
	e := lm.e
	if e.compat() {
		// apimachinery keeps the elements as written, except when there is
		// no live list and $setElementOrder brought the list here: it then
		// strips directive maps from them, as from any value it adds.
		lm.beginList()
		for _, p := range lm.patch {
			if lm.in.hasLive {
				e.w.copy(p)
			} else {
				e.compatNew(p, false)
			}
		}
		e.w.endList()
		return nil
	}
	lm.in.hasLive = false
	lm.live, lm.plan.Live, lm.plan.Deleted = nil, nil, nil
	slots, err := listorder.Plan(lm.plan, lm.e.mode)
	if err != nil {
		return lm.planError(err)
	}
	return lm.write(slots)
}
