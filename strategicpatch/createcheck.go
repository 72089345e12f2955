package strategicpatch

import "github.com/stratadev/strata/schema"

// checkCopy vets a value of modified that the patch carries whole (a new
// field or list item, a replaced value): applying the patch reads it as a
// patch, so it must hold nothing the apply engine rejects there — a map key
// twice, a merge list mixing maps and primitives, items lacking their merge
// key or naming one element twice.
func (c *creator[N, R]) checkCopy(n N, f schema.Field) error {
	switch c.r.kind(n) {
	case Map:
		return c.checkCopyMap(n, f.Type)
	case List:
		return c.checkCopyList(n, f)
	}
	return nil
}

func (c *creator[N, R]) checkCopyMap(n N, t schema.Type) error {
	if c.depth++; c.depth > MaxDepth {
		return c.path.errorf(ErrSyntax, "nesting deeper than %d levels", MaxDepth)
	}
	defer func() { c.depth-- }()
	if err := c.checkDuplicateKeys(n); err != nil {
		return err
	}
	var err error
	c.r.members(n, func(key string, _, v N) bool {
		if k := c.r.kind(v); k != Map && k != List {
			return true
		}
		var f schema.Field
		if t != nil {
			f, _ = t.Field(key)
		}
		c.path.pushField(key)
		err = c.checkCopy(v, f)
		c.path.pop()
		return err == nil
	})
	return err
}

func (c *creator[N, R]) checkCopyList(n N, f schema.Field) error {
	if c.depth++; c.depth > MaxDepth {
		return c.path.errorf(ErrSyntax, "nesting deeper than %d levels", MaxDepth)
	}
	defer func() { c.depth-- }()
	if f.Strategy.Has(schema.Merge) {
		keys, err := c.mergeKeys(f, side[N]{n, true})
		if err != nil {
			return err
		}
		if _, err := c.index(n, keys, "modified", true); err != nil {
			return err
		}
	}
	var elem schema.Type
	if f.Type != nil {
		elem = f.Type.Elem()
	}
	var err error
	i := 0
	c.r.items(n, func(it N) bool {
		c.path.pushIndex(i)
		i++
		err = c.checkCopy(it, schema.Field{Type: elem})
		c.path.pop()
		return err == nil
	})
	return err
}
