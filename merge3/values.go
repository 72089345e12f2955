package merge3

import (
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/stratadev/strata/schema"
	"github.com/stratadev/strata/strategicpatch"
)

// merger merges one resource (or one Kptfile): original o, upstream u and
// local l, any of them absent (nil) at a given path. The result is built from
// local's nodes, so local's comments, key order and styles survive; what
// comes from upstream takes local's comments where it replaces a local value.
type merger struct {
	opts     Options
	report   *Report
	file     string
	resource string
	path     []string
	// listIdentity, when set, chooses the identity of a list's elements for
	// a field path (the Kptfile pipeline); nil falls back to the schema.
	listIdentity func(path []string, lists [3]*yaml.Node) (identify func(*yaml.Node) (string, bool), ok bool)
	// localOnly, when set, names the field paths whose value is local's
	// whatever the other versions say (the Kptfile's identity).
	localOnly func(path []string) bool
}

// value merges three values of one field and returns the result, nil when
// the field ends up absent.
func (m *merger) value(o, u, l *yaml.Node, f schema.Field) *yaml.Node {
	switch {
	case u == nil && l == nil:
		return nil
	case isMap(u) && isMap(l) && (o == nil || isMap(o)) && !f.Strategy.Has(schema.Replace):
		return m.mapValue(o, u, l, f.Type)
	case isList(u) && isList(l) && (o == nil || isList(o)):
		if identify, ok := m.identity(o, u, l, f); ok {
			return m.listValue(o, u, l, f, identify)
		}
	}
	return m.atomic(o, u, l)
}

// atomic merges a value taken whole: whichever side changed it wins; when
// both changed it differently, that is a conflict.
func (m *merger) atomic(o, u, l *yaml.Node) *yaml.Node {
	switch {
	case same(u, o):
		return deepCopy(l)
	case same(l, o):
		return styled(u, l)
	case same(u, l):
		return deepCopy(l)
	}
	if m.conflict(u, l) == TakeUpstream {
		return styled(u, l)
	}
	return deepCopy(l)
}

// conflict records that both sides changed the current path and returns
// which side the policy takes.
func (m *merger) conflict(u, l *yaml.Node) ConflictPolicy {
	taken := m.opts.OnConflict
	if taken == "" || taken == Fail {
		taken = TakeUpstream
	}
	m.report.Conflicts = append(m.report.Conflicts, Conflict{
		File: m.file, Resource: m.resource, Path: joinPath(m.path),
		Upstream: oneLine(u), Local: oneLine(l), Taken: string(taken),
	})
	return taken
}

// mapValue merges three maps: local's keys in local's order, then the keys
// upstream added, in upstream's order.
func (m *merger) mapValue(o, u, l *yaml.Node, t schema.Type) *yaml.Node {
	out := shallowCopy(l)
	oi, ui, li := indexMap(o), indexMap(u), indexMap(l)
	for i := 0; i+1 < len(l.Content); i += 2 {
		key := l.Content[i].Value
		r := m.field(key, oi.get(key), ui.get(key), l.Content[i+1], t)
		if r != nil {
			out.Content = append(out.Content, deepCopy(l.Content[i]), r)
		}
	}
	for i := 0; i+1 < len(u.Content); i += 2 {
		key := u.Content[i].Value
		if li.get(key) != nil {
			continue
		}
		if r := m.field(key, oi.get(key), u.Content[i+1], nil, t); r != nil {
			out.Content = append(out.Content, deepCopy(u.Content[i]), r)
		}
	}
	return out
}

func (m *merger) field(key string, o, u, l *yaml.Node, t schema.Type) *yaml.Node {
	m.path = append(m.path, key)
	defer func() { m.path = m.path[:len(m.path)-1] }()
	if m.localOnly != nil && m.localOnly(m.path) {
		return deepCopy(l)
	}
	var f schema.Field
	if t != nil {
		f, _ = t.Field(key)
	}
	return m.value(o, u, l, f)
}

// identity picks how a list's elements are identified: by the pipeline rules
// for the Kptfile, by the schema's merge keys, or as a set; ok is false for a
// list merged whole.
func (m *merger) identity(o, u, l *yaml.Node, f schema.Field) (func(*yaml.Node) (string, bool), bool) {
	if m.listIdentity != nil {
		if identify, ok := m.listIdentity(m.path, [3]*yaml.Node{o, u, l}); ok {
			return identify, identify != nil
		}
	}
	if !f.Strategy.Has(schema.Merge) {
		return nil, false
	}
	keys := f.MergeKeys
	return func(n *yaml.Node) (string, bool) { return strategicpatch.YAMLIdentity(n, keys) }, true
}

// listValue merges three lists element by element: local's elements in
// local's order, then the elements upstream added, in upstream's order. A
// list whose elements cannot all be identified, or that holds one identity
// twice, is merged whole.
func (m *merger) listValue(o, u, l *yaml.Node, f schema.Field, identify func(*yaml.Node) (string, bool)) *yaml.Node {
	oi, ok1 := indexList(o, identify)
	ui, ok2 := indexList(u, identify)
	li, ok3 := indexList(l, identify)
	if !ok1 || !ok2 || !ok3 {
		return m.atomic(o, u, l)
	}
	var elem schema.Type
	if f.Type != nil {
		elem = f.Type.Elem()
	}
	out := shallowCopy(l)
	for j, item := range l.Content {
		if r := m.element(li.ids[j], oi.get(li.ids[j]), ui.get(li.ids[j]), item, elem); r != nil {
			out.Content = append(out.Content, r)
		}
	}
	for j, item := range u.Content {
		if li.get(ui.ids[j]) != nil {
			continue
		}
		if r := m.element(ui.ids[j], oi.get(ui.ids[j]), item, nil, elem); r != nil {
			out.Content = append(out.Content, r)
		}
	}
	return out
}

// element merges one list element. An element one side deleted and the
// other changed is a conflict, settled by the policy: upstream's side
// deletes it (or restores upstream's change of an element local deleted),
// local's keeps local's.
func (m *merger) element(id string, o, u, l *yaml.Node, elem schema.Type) *yaml.Node {
	m.path = append(m.path, "["+elementName(id, l, u)+"]")
	defer func() { m.path = m.path[:len(m.path)-1] }()
	switch {
	case o != nil && u == nil && l != nil:
		if same(l, o) {
			return nil
		}
		if m.conflict(nil, l) == TakeUpstream {
			return nil
		}
		return deepCopy(l)
	case l == nil && u != nil && o != nil && !same(u, o):
		if m.conflict(u, nil) == TakeUpstream {
			return deepCopy(u)
		}
		return nil
	case l == nil && o != nil:
		return nil
	}
	return m.value(o, u, l, schema.Field{Type: elem})
}

// joinPath writes a field path as "spec.containers[name=web].image".
func joinPath(elems []string) string {
	var b strings.Builder
	for _, e := range elems {
		if b.Len() > 0 && !strings.HasPrefix(e, "[") {
			b.WriteByte('.')
		}
		b.WriteString(e)
	}
	return b.String()
}
