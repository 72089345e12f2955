package schema

// kind is what a schema node says its values are.
type kind uint8

const (
	kindUnknown kind = iota // no "type", no properties, no items
	kindObject
	kindArray
	kindScalar
)

// node is one schema of an OpenAPI document or CRD, compiled: $ref and allOf
// are folded in, extensions are parsed. It implements Type.
type node struct {
	name  string // "#/definitions/Foo/properties/bar"
	path  string // JSON path in the file, for errors
	kind  kind
	props map[string]*node
	// open means any field name is allowed (additionalProperties: true,
	// x-kubernetes-preserve-unknown-fields); additional, when set, is the
	// schema of fields that are not properties.
	open       bool
	additional *node
	items      *node
	ext        extensions
	// bases are the schemas this one extends: its $ref and allOf members.
	// finish folds them in.
	bases []*node

	// Filled by computeMeta: the patch metadata of a field whose value has this
	// schema.
	strategy  Strategy
	mergeKeys []string
	state     finishState
	sharedMap bool // props belongs to a base
}

type finishState uint8

const (
	unfinished finishState = iota
	finishing
	finished
)

// Name returns the schema's JSON pointer in its document.
func (n *node) Name() string { return n.name }

// Elem returns the schema of the list's elements, nil when unknown.
func (n *node) Elem() Type { return n.items.typ() }

// Field returns the metadata of field name; see Type.
func (n *node) Field(name string) (Field, bool) {
	if p, ok := n.props[name]; ok {
		return p.field(), true
	}
	switch {
	case n.additional != nil:
		return n.additional.field(), true
	case n.open:
		return Field{}, true
	case len(n.props) > 0, n.kind == kindArray, n.kind == kindScalar:
		return Field{}, false
	}
	// An object or untyped schema that says nothing about its fields.
	return Field{}, true
}

// field returns the metadata of a field whose value has schema n.
func (n *node) field() Field {
	return Field{Strategy: n.strategy, MergeKeys: n.mergeKeys, Type: n.typ()}
}

// typ returns n as a Type, keeping a nil node a nil interface.
func (n *node) typ() Type {
	if n == nil {
		return nil
	}
	return n
}

// computeMeta sets n's patch metadata; every node must be finished, since it
// looks at n's elements.
func (n *node) computeMeta() {
	n.strategy, n.mergeKeys = n.ext.patchMeta(n.items)
}

// finish folds n's bases into n, bases first, and computes its patch
// metadata. A base that is being finished is a reference cycle; the error
// names the chain of schemas.
func (n *node) finish(stack []*node, errs *errorList) {
	switch n.state {
	case finished:
		return
	case finishing:
		errs.addf(n.path, "$ref cycle: %s", cycleText(stack, n))
		n.bases = nil
		return
	}
	n.state = finishing
	stack = append(stack, n)
	for _, b := range n.bases {
		b.finish(stack, errs)
		if b.state == finished {
			n.inherit(b)
		}
	}
	n.bases = nil
	n.state = finished
}

// inherit copies into n what b says and n does not.
func (n *node) inherit(b *node) {
	if n.kind == kindUnknown {
		n.kind = b.kind
	}
	n.open = n.open || b.open
	if n.additional == nil {
		n.additional = b.additional
	}
	if n.items == nil {
		n.items = b.items
	}
	n.ext.inherit(&b.ext)
	n.inheritProps(b.props)
}

func (n *node) inheritProps(props map[string]*node) {
	if len(props) == 0 {
		return
	}
	if n.props == nil {
		n.props, n.sharedMap = props, true
		return
	}
	if n.sharedMap {
		own := make(map[string]*node, len(n.props)+len(props))
		for k, v := range n.props {
			own[k] = v
		}
		n.props, n.sharedMap = own, false
	}
	for k, v := range props {
		if _, ok := n.props[k]; !ok {
			n.props[k] = v
		}
	}
}

func cycleText(stack []*node, n *node) string {
	s := ""
	started := false
	for _, m := range stack {
		if m == n {
			started = true
		}
		if started {
			s += m.name + " -> "
		}
	}
	return s + n.name
}
