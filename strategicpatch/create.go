package strategicpatch

import (
	"github.com/stratadev/strata/schema"
)

// creator builds the strategic merge patch that takes current to modified,
// deleting what original had and modified no longer has. With current equal
// to original it is the two-way patch.
type creator[N any, R reader[N]] struct {
	r     R
	path  path
	depth int
	// conflicts lists, when track is set, the paths where the patch
	// overwrites a change someone else made in current (current differs from
	// original there).
	track     bool
	conflicts []string
	// twoWay is set when original and current are one document: the sides
	// o and cur then always hold the same node.
	twoWay bool
}

// conflict records the current path when current no longer holds what
// original had: the patch would overwrite another writer's change.
func (c *creator[N, R]) conflict(o, cur side[N]) {
	if !c.track || o.has == cur.has && (!o.has || equal(c.r, o.n, cur.n)) {
		return
	}
	c.conflicts = append(c.conflicts, c.path.String())
}

// side is one input's value at the path being compared; has is false when
// that input has nothing there.
type side[N any] struct {
	n   N
	has bool
}

func (s side[N]) kind(r interface{ kind(N) Kind }) Kind {
	if !s.has {
		return Null
	}
	return r.kind(s.n)
}

// createRoot compares the three root maps.
func (c *creator[N, R]) createRoot(original, modified, current N, t schema.Type) (*ptree[N], error) {
	sides := [3]side[N]{{original, true}, {modified, true}, {current, true}}
	for i, name := range [3]string{"original", "modified", "current"} {
		switch c.r.kind(sides[i].n) {
		case Map:
		case Null:
			sides[i].has = false
		default:
			return nil, c.path.errorf(ErrType, "the %s document is %s, want a map", name, c.describe(sides[i].n))
		}
	}
	p, err := c.diffMap(sides[0], sides[1], sides[2], t)
	if err != nil {
		return nil, err
	}
	if p == nil {
		p = &ptree[N]{kind: pMap}
	}
	return p, nil
}

func (c *creator[N, R]) describe(n N) string {
	k := c.r.kind(n)
	if k.scalar() {
		return k.String() + " " + c.r.identity(n)
	}
	return "a " + k.String()
}

// diffMap returns the patch for one map, or nil when nothing changes.
// Members follow modified's order; deletions follow, in original's order.
func (c *creator[N, R]) diffMap(o, m, cur side[N], t schema.Type) (*ptree[N], error) {
	if c.depth++; c.depth > MaxDepth {
		return nil, c.path.errorf(ErrSyntax, "nesting deeper than %d levels", MaxDepth)
	}
	defer func() { c.depth-- }()
	p := &ptree[N]{kind: pMap}
	if m.has {
		if err := c.checkDuplicateKeys(m.n); err != nil {
			return nil, err
		}
		var err error
		inOrig, inCur := membersOf(c.r, o), membersOf(c.r, cur)
		c.r.members(m.n, func(key string, keyNode, mv N) bool {
			ov, hasO := inOrig(key)
			cv, hasC := inCur(key)
			err = c.diffMember(p, t, key, keyNode, side[N]{ov, hasO}, side[N]{mv, true}, side[N]{cv, hasC})
			return err == nil
		})
		if err != nil {
			return nil, err
		}
	}
	if o.has && cur.has {
		inMod, inCur := membersOf(c.r, m), membersOf(c.r, cur)
		c.r.members(o.n, func(key string, keyNode, ov N) bool {
			if _, kept := inMod(key); kept {
				return true
			}
			if cv, ok := inCur(key); ok && c.r.kind(cv) != Null {
				p.addKeyed(key, keyNode, &ptree[N]{kind: pNull})
				c.path.pushField(key)
				c.conflict(side[N]{ov, true}, side[N]{cv, true})
				c.path.pop()
			}
			return true
		})
	}
	if len(p.entries) == 0 {
		return nil, nil
	}
	return p, nil
}

func (c *creator[N, R]) checkDuplicateKeys(n N) error {
	if c.r.count(n) < 2 {
		return nil
	}
	seen := make(map[string]bool, c.r.count(n))
	var err error
	c.r.members(n, func(key string, _, _ N) bool {
		if seen[key] {
			err = c.path.errorf(ErrSyntax, "key %q appears twice in the modified document", key)
		}
		seen[key] = true
		return err == nil
	})
	return err
}

// diffMember adds to p the patch for member key: its values in original,
// modified and current.
func (c *creator[N, R]) diffMember(p *ptree[N], t schema.Type, key string, keyNode N, os, m, cs side[N]) error {
	c.path.pushField(key)
	defer c.path.pop()
	var f schema.Field
	if t != nil {
		f, _ = t.Field(key)
	}
	if c.shapeChanged(os, m) {
		// The patch replaces the value, as apimachinery's does, unless the
		// schema says the new value cannot be there.
		if f.Strategy.Has(schema.Merge) && m.kind(c.r) != List {
			return c.path.errorf(ErrType, "the schema makes this a merge list, but the modified document has %s (the original %s)", c.describe(m.n), c.describe(os.n))
		}
		os.has = false // original's value says nothing about the new one's parts
	}
	if m.kind(c.r) == List && cs.kind(c.r) == List && f.Strategy.Has(schema.Merge) {
		lp, err := c.diffList(os, m, cs, f)
		if err != nil {
			return err
		}
		lp.addTo(p, key, keyNode)
		return nil
	}
	sub, err := c.diffValue(os, m, cs, f)
	if err != nil || sub == nil {
		return err
	}
	p.addKeyed(key, keyNode, sub)
	return nil
}

// shapeChanged reports whether a field is a map in one document and a list
// or a primitive in the other (or a list against a primitive).
func (c *creator[N, R]) shapeChanged(o, m side[N]) bool {
	if !o.has || !m.has {
		return false
	}
	ok, mk := c.r.kind(o.n), c.r.kind(m.n)
	return ok != Null && mk != Null && ok != mk && !(ok.scalar() && mk.scalar())
}

// diffValue returns the patch for one value of modified, or nil.
func (c *creator[N, R]) diffValue(o, m, cur side[N], f schema.Field) (*ptree[N], error) {
	mk, ck := m.kind(c.r), cur.kind(c.r)
	switch {
	case cur.has && ck == mk && mk == Map && !f.Strategy.Has(schema.Replace):
		return c.diffNestedMap(o, m, cur, f)
	case cur.has && ck == mk && equal(c.r, cur.n, m.n):
		return nil, nil
	}
	if err := c.checkCopy(m.n, f); err != nil {
		return nil, err
	}
	c.conflict(o, cur)
	return copyOf(m.n), nil
}

func (c *creator[N, R]) diffNestedMap(o, m, cur side[N], f schema.Field) (*ptree[N], error) {
	if o.has && c.r.kind(o.n) != Map {
		o.has = false
	}
	sub, err := c.diffMap(o, m, cur, f.Type)
	if err != nil || !f.Strategy.Has(schema.RetainKeys) {
		return sub, err
	}
	return c.withRetainKeys(sub, m.n, cur.n), nil
}

// withRetainKeys adds $retainKeys, listing modified's keys, to the patch of
// a map with the retainKeys strategy, as apimachinery does: when modified
// has keys, and the map changes or current holds a key modified lacks,
// which the directive then clears. sub is the map's patch, nil when nothing
// else changes.
func (c *creator[N, R]) withRetainKeys(sub *ptree[N], m, cur N) *ptree[N] {
	keys := &ptree[N]{kind: pList}
	c.r.members(m, func(key string, _, v N) bool {
		if c.r.kind(v) != Null {
			keys.items = append(keys.items, &ptree[N]{kind: pString, text: key})
		}
		return true
	})
	if len(keys.items) == 0 || sub == nil && !c.hasExtraKey(cur, m) {
		return sub
	}
	if sub == nil {
		sub = &ptree[N]{kind: pMap}
	}
	sub.entries = append([]pentry[N]{{key: retainKeysKey, val: keys}}, sub.entries...)
	return sub
}

// hasExtraKey reports whether map cur has a non-null member map m lacks.
func (c *creator[N, R]) hasExtraKey(cur, m N) bool {
	extra := false
	c.r.members(cur, func(key string, _, v N) bool {
		if c.r.kind(v) != Null {
			_, has := c.r.lookup(m, key)
			extra = !has
		}
		return !extra
	})
	return extra
}
