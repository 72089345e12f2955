package strategicpatch

import (
	"strings"

	"github.com/stratadev/strata/listorder"

	"github.com/stratadev/strata/schema"
)

// listPatch is what a patch says about one merge list: the list's patch
// items, $deleteFromPrimitiveList values and $setElementOrder.
type listPatch[N any] struct {
	items   *ptree[N] // nil when no item changes
	deletes *ptree[N]
	order   *ptree[N]
}

// addTo writes the directives beside the list, in the order apimachinery
// prints them (testdata/seeds/000-preserve-order.yaml): $setElementOrder,
// $deleteFromPrimitiveList, then the list.
func (lp listPatch[N]) addTo(p *ptree[N], key string, keyNode N) {
	if lp.order != nil {
		p.add(orderPrefix+key, lp.order)
	}
	if lp.deletes != nil {
		p.add(deletePrefix+key, lp.deletes)
	}
	if lp.items != nil {
		p.addKeyed(key, keyNode, lp.items)
	}
}

// indexedList is one list's items with their identities.
type indexedList[N any] struct {
	nodes []N
	ids   []string
	first map[string]int // identity -> first item
}

// diffList compares a merge list. Items are matched by identity through hash
// maps, so the work is linear in the lists' lengths.
func (c *creator[N, R]) diffList(o, m, cur side[N], f schema.Field) (listPatch[N], error) {
	var lp listPatch[N]
	keys, err := c.mergeKeys(f, o, m, cur)
	if err != nil {
		return lp, err
	}
	mods, err := c.index(m.n, keys, "modified", true)
	if err != nil {
		return lp, err
	}
	curs, err := c.index(cur.n, keys, "current", false)
	if err != nil {
		return lp, err
	}
	origs := &indexedList[N]{first: map[string]int{}}
	if c.twoWay {
		origs = curs // original is current: index it once
	} else if o.has && c.r.kind(o.n) == List {
		if origs, err = c.index(o.n, keys, "original", false); err != nil {
			return lp, err
		}
	}
	c.deletions(origs, mods, curs, keys, &lp)
	changed, err := c.changes(origs, mods, curs, keys, f, &lp)
	if err != nil {
		return lp, err
	}
	// The directive goes with any change to the list, deletions included
	// (testdata/seeds/000-preserve-order.yaml has it beside "$patch:
	// delete" and beside $deleteFromPrimitiveList, as apimachinery writes
	// it), unless modified
	// has no items left to order.
	deleted := (lp.items != nil || lp.deletes != nil) && len(mods.ids) > 0
	if changed || deleted || !sameRelativeOrder(mods, curs) {
		lp.order = c.orderDirective(mods, keys)
	}
	return lp, nil
}

// mergeKeys returns the keys a merge list's items are identified by: the
// schema's merge keys for maps, none for primitives.
func (c *creator[N, R]) mergeKeys(f schema.Field, sides ...side[N]) ([]string, error) {
	maps, err := c.listOfMaps(sides...)
	if err != nil || !maps {
		return nil, err
	}
	if len(f.MergeKeys) == 0 {
		return nil, c.path.errorf(ErrMissingMergeKey, "the list holds maps and has a merge strategy, but the schema gives no merge key")
	}
	return f.MergeKeys, nil
}

// listOfMaps tells whether a merge list holds maps, rejecting mixtures.
func (c *creator[N, R]) listOfMaps(sides ...side[N]) (bool, error) {
	var first Kind
	seen := false
	var err error
	for _, s := range sides {
		if !s.has || c.r.kind(s.n) != List {
			continue
		}
		c.r.items(s.n, func(it N) bool {
			k := c.r.kind(it)
			if k == List {
				err = c.path.errorf(ErrType, "a merge list cannot hold lists")
				return false
			}
			if !seen {
				first, seen = k, true
			} else if (k == Map) != (first == Map) {
				err = c.path.errorf(ErrType, "the list mixes %s and %s items", first, k)
				return false
			}
			return true
		})
		if err != nil {
			return false, err
		}
	}
	return seen && first == Map, nil
}

// index reads a list's items and identities. Modified may not hold one
// identity twice; the others may (a real-world state, kubernetes#58477).
func (c *creator[N, R]) index(n N, keys []string, which string, unique bool) (*indexedList[N], error) {
	size := c.r.count(n)
	l := &indexedList[N]{nodes: make([]N, 0, size), ids: make([]string, 0, size), first: make(map[string]int, size)}
	var err error
	c.r.items(n, func(it N) bool {
		id, ok := c.identity(it, keys)
		if !ok {
			err = c.path.errorf(ErrMissingMergeKey, "item %d of the %s list lacks merge key %s", len(l.nodes), which, strings.Join(keys, ","))
			return false
		}
		if prev, dup := l.first[id]; dup {
			if unique {
				err = c.path.errorf(ErrDuplicateMergeKey, "items %d and %d of the %s list are both %s", prev, len(l.nodes), which, c.keyText(it, keys))
				return false
			}
		} else {
			l.first[id] = len(l.nodes)
		}
		l.nodes = append(l.nodes, it)
		l.ids = append(l.ids, id)
		return true
	})
	return l, err
}

// identity is an item's value (primitives) or its merge-key values (maps).
func (c *creator[N, R]) identity(it N, keys []string) (string, bool) {
	if len(keys) == 0 {
		if !c.r.kind(it).scalar() {
			return "", false
		}
		return c.r.identity(it), true
	}
	if c.r.kind(it) != Map {
		return "", false
	}
	parts := make([]string, len(keys))
	for i, key := range keys {
		v, ok := c.r.lookup(it, key)
		if !ok || !c.r.kind(v).scalar() {
			return "", false
		}
		parts[i] = c.r.identity(v)
	}
	return listorder.JoinKey(parts), true
}

func (c *creator[N, R]) keyText(it N, keys []string) string { return keyText(c.r, it, keys) }

// deletions removes what original had, modified dropped and current still
// has: `$patch: delete` elements for maps, $deleteFromPrimitiveList values
// for primitives. Deleting an element another writer changed is a conflict.
func (c *creator[N, R]) deletions(origs, mods, curs *indexedList[N], keys []string, lp *listPatch[N]) {
	deleted := map[string]bool{}
	for i, id := range origs.ids {
		if _, kept := mods.first[id]; kept || deleted[id] {
			continue
		}
		ci, present := curs.first[id]
		if !present {
			continue
		}
		deleted[id] = true
		c.path.pushIndex(i)
		c.conflict(side[N]{origs.nodes[i], true}, side[N]{curs.nodes[ci], true})
		c.path.pop()
		if len(keys) == 0 {
			if lp.deletes == nil {
				lp.deletes = &ptree[N]{kind: pList}
			}
			lp.deletes.items = append(lp.deletes.items, copyOf(origs.nodes[i]))
			continue
		}
		del := &ptree[N]{kind: pMap}
		c.addKeyFields(del, origs.nodes[i], keys)
		del.add(patchKey, &ptree[N]{kind: pString, text: directiveDelete})
		if lp.items == nil {
			lp.items = &ptree[N]{kind: pList}
		}
		lp.items.items = append(lp.items.items, del)
	}
}

func (c *creator[N, R]) addKeyFields(p *ptree[N], item N, keys []string) {
	c.r.members(item, func(key string, keyNode, v N) bool {
		for _, k := range keys {
			if k == key {
				p.addKeyed(key, keyNode, copyOf(v))
			}
		}
		return true
	})
}

// changes adds modified's new and changed items, in modified's order, and
// reports whether there were any.
func (c *creator[N, R]) changes(origs, mods, curs *indexedList[N], keys []string, f schema.Field, lp *listPatch[N]) (bool, error) {
	var elem schema.Type
	if f.Type != nil {
		elem = f.Type.Elem()
	}
	changed := false
	for j, id := range mods.ids {
		var item *ptree[N]
		var err error
		ci, inCur := curs.first[id]
		switch {
		case !inCur:
			item, err = c.newItem(origs, mods, j, elem)
		case len(keys) == 0:
			continue
		default:
			item, err = c.changedItem(origs, mods, j, curs.nodes[ci], keys, f, elem)
		}
		if err != nil {
			return false, err
		}
		if item == nil {
			continue
		}
		changed = true
		if lp.items == nil {
			lp.items = &ptree[N]{kind: pList}
		}
		lp.items.items = append(lp.items.items, item)
	}
	return changed, nil
}

// newItem is the patch item for modified's item j, which current lacks: the
// item whole. Another writer deleting an element modified still has is a
// conflict.
func (c *creator[N, R]) newItem(origs, mods *indexedList[N], j int, elem schema.Type) (*ptree[N], error) {
	c.path.pushIndex(j)
	defer c.path.pop()
	mv := mods.nodes[j]
	if err := c.checkCopy(mv, schema.Field{Type: elem}); err != nil {
		return nil, err
	}
	if oi, inOrig := origs.first[mods.ids[j]]; inOrig {
		c.conflict(side[N]{origs.nodes[oi], true}, side[N]{})
	}
	return copyOf(mv), nil
}

// changedItem is the patch item for modified's map item j against current's
// item cv: its merge keys and the map's patch, or nil when nothing changes.
func (c *creator[N, R]) changedItem(origs, mods *indexedList[N], j int, cv N, keys []string, f schema.Field, elem schema.Type) (*ptree[N], error) {
	mv := mods.nodes[j]
	if equal(c.r, mv, cv) {
		return nil, nil // most items of a long list: no path text, no walk
	}
	var os side[N]
	if oi, inOrig := origs.first[mods.ids[j]]; inOrig {
		os = side[N]{origs.nodes[oi], true}
	}
	c.path.pushKeyed(c.keyText(mv, keys))
	sub, err := c.diffMap(os, side[N]{mv, true}, side[N]{cv, true}, elem)
	c.path.pop()
	if err != nil {
		return nil, err
	}
	if f.Strategy.Has(schema.RetainKeys) {
		sub = c.withRetainKeys(sub, mv, cv)
	}
	if sub == nil {
		return nil, nil
	}
	item := &ptree[N]{kind: pMap}
	c.addKeyFields(item, mv, keys)
	item.entries = append(item.entries, sub.entriesWithout(keys)...)
	return item, nil
}

func (p *ptree[N]) entriesWithout(keys []string) []pentry[N] {
	out := p.entries[:0:0]
	for _, e := range p.entries {
		skip := false
		for _, k := range keys {
			skip = skip || e.key == k
		}
		if !skip {
			out = append(out, e)
		}
	}
	return out
}

// sameRelativeOrder reports whether modified's items that current also has
// appear in current in modified's order.
func sameRelativeOrder[N any](mods, curs *indexedList[N]) bool {
	last := -1
	for _, id := range mods.ids {
		ci, ok := curs.first[id]
		if !ok {
			continue
		}
		if ci < last {
			return false
		}
		last = ci
	}
	return true
}

// orderDirective lists modified's items by their keys (maps) or values.
// Its nodes come from three slabs, so a long list costs a few allocations,
// not several per item.
func (c *creator[N, R]) orderDirective(mods *indexedList[N], keys []string) *ptree[N] {
	n := len(mods.nodes)
	order := &ptree[N]{kind: pList, items: make([]*ptree[N], n)}
	slab := make([]ptree[N], n*(1+len(keys)))
	if len(keys) == 0 {
		for i, it := range mods.nodes {
			slab[i] = ptree[N]{kind: pCopy, ref: it}
			order.items[i] = &slab[i]
		}
		return order
	}
	entries := make([]pentry[N], 0, n*len(keys))
	vals := slab[n:]
	for i, it := range mods.nodes {
		start := len(entries)
		for _, k := range keys {
			v, _ := c.r.lookup(it, k) // index checked every item has its keys
			vals[0] = ptree[N]{kind: pCopy, ref: v}
			entries = append(entries, pentry[N]{key: k, val: &vals[0]})
			vals = vals[1:]
		}
		slab[i] = ptree[N]{kind: pMap, entries: entries[start:len(entries):len(entries)]}
		order.items[i] = &slab[i]
	}
	return order
}
