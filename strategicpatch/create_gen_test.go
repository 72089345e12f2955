package strategicpatch_test

import (
	"encoding/json"
	"errors"
	"flag"
	"maps"
	"reflect"
	"slices"
	"strings"

	sigsyaml "sigs.k8s.io/yaml"

	"github.com/stratadev/strata/schema"
	"github.com/stratadev/strata/strategicpatch"
)

// Document pairs and triples for the creation tests, made with the apply
// generator (gen_test.go): original is a generated document, modified is
// original with a generated patch applied in strata mode, and current is
// original with another generated patch applied ("someone else's changes").

var createCases = flag.Int("createcases", 2000, "number of pairs and of triples the creation property and differential tests generate")

// genTriple is one generated (original, modified, current) triple; the
// values are the documents decoded.
type genTriple struct {
	schema          genSchema
	st              schema.Type
	orig, mod, cur  []byte
	origV, modV, cV any
}

var genSchemaTypes = func() []schema.Type {
	out := make([]schema.Type, len(genSchemas))
	for i, s := range genSchemas {
		out[i] = schema.ForValue(s.goType)
	}
	return out
}()

// nextTriple generates a triple whose documents are all valid inputs by
// design (see excluded); skipped counts the candidates it threw away.
func (g *gen) nextTriple(skipped *int) genTriple {
	for {
		c := g.next()
		st := genSchemaTypes[genSchemaIndex(c.schema.name)]
		mod, err := strategicpatch.ApplyJSON(c.orig, c.patch, st, strategicpatch.Options{})
		if err != nil {
			*skipped++
			continue
		}
		cur := c.orig
		if !g.chance(0.1) {
			p2 := g.mapPatch(c.schema.root, c.origV.(map[string]any), true, 0, false)
			if cur, err = strategicpatch.ApplyJSON(c.orig, marshal(p2), st, strategicpatch.Options{}); err != nil {
				*skipped++
				continue
			}
		}
		tr := genTriple{schema: c.schema, st: st, orig: c.orig, mod: mod, cur: cur, origV: c.origV}
		json.Unmarshal(mod, &tr.modV)
		json.Unmarshal(cur, &tr.cV)
		if excluded(tr.origV, st) || excluded(tr.modV, st) || excluded(tr.cV, st) {
			*skipped++
			continue
		}
		return tr
	}
}

// excluded reports documents outside the creation properties by design:
//
//   - duplicate merge keys or duplicate set values in a merge list: a patch
//     cannot remove one of two equal entries (and strata rejects them in
//     modified);
//   - null anywhere inside the document: the apply engine reads a null as
//     "absent", so no patch can produce one.
func excluded(v any, t schema.Type) bool {
	switch v := v.(type) {
	case nil:
		return true
	case map[string]any:
		for _, k := range sortedKeys(v) {
			x, f := v[k], fieldOf(t, k)
			if l, ok := x.([]any); ok && f.Strategy.Has(schema.Merge) && hasDuplicateIDs(l, f.MergeKeys) {
				return true
			}
			if excluded(x, f.Type) {
				return true
			}
		}
	case []any:
		for _, x := range v {
			if excluded(x, elemOf(t)) {
				return true
			}
		}
	}
	return false
}

func hasDuplicateIDs(l []any, keys []string) bool {
	seen := map[string]bool{}
	for _, it := range l {
		id, ok := itemID(it, keys)
		if ok && seen[id] {
			return true
		}
		seen[id] = true
	}
	return false
}

func fieldOf(t schema.Type, k string) schema.Field {
	if t == nil {
		return schema.Field{}
	}
	f, _ := t.Field(k)
	return f
}

func elemOf(t schema.Type) schema.Type {
	if t == nil {
		return nil
	}
	return t.Elem()
}

// itemID is a merge list item's identity: its merge-key values (maps) or its
// value (primitives). ok is false for a map lacking a key.
func itemID(it any, keys []string) (string, bool) {
	m, isMap := it.(map[string]any)
	if !isMap || len(keys) == 0 {
		return mustJSON(it), !isMap
	}
	parts := make([]string, len(keys))
	for i, k := range keys {
		v, ok := m[k]
		if !ok {
			return "", false
		}
		parts[i] = k + "=" + mustJSON(v)
	}
	return strings.Join(parts, ","), true
}

// listKeys is the merge keys a merge list's items are matched by: the
// field's keys for lists of maps, none for primitives.
func listKeys(f schema.Field, lists ...[]any) []string {
	for _, l := range lists {
		if len(l) == 0 {
			continue
		}
		if _, ok := l[0].(map[string]any); ok { // the first item tells
			return f.MergeKeys
		}
		return nil
	}
	return nil
}

var (
	jsonUnmarshal = json.Unmarshal
	yamlToJSON    = func(b []byte) ([]byte, error) { return sigsyaml.YAMLToJSON(b) }
)

// mixedMergeLists reports merge lists of primitives holding values of
// different kinds (a string among numbers) at one path across docs, or
// primitives in a list whose schema gives a merge key: valid in strata mode, rejected by apimachinery whatever the patch, so Kubernetes
// mode's ErrType there is by design.
func mixedMergeLists(t schema.Type, docs ...any) bool {
	kinds := map[string]reflect.Type{}
	mixed := false
	var walk func(p string, v any, t schema.Type)
	walk = func(p string, v any, t schema.Type) {
		switch v := v.(type) {
		case map[string]any:
			for _, k := range sortedKeys(v) {
				x, f := v[k], fieldOf(t, k)
				if l, ok := x.([]any); ok && f.Strategy.Has(schema.Merge) {
					for _, it := range l {
						if _, isMap := it.(map[string]any); isMap {
							continue
						}
						mixed = mixed || len(f.MergeKeys) > 0
						if prev, seen := kinds[p+"."+k]; seen && prev != reflect.TypeOf(it) {
							mixed = true
						}
						kinds[p+"."+k] = reflect.TypeOf(it)
					}
				}
				walk(p+"."+k, x, f.Type)
			}
		case []any:
			for _, x := range v {
				id, _ := itemID(x, nil)
				walk(p+"["+id+"]", x, elemOf(t))
			}
		}
	}
	for _, d := range docs {
		walk("", d, t)
	}
	return mixed
}

// kubernetesByDesign tells whether Kubernetes mode's error applying a
// creator's patch to the triple is one of the exclusions by design: fields
// the Go type lacks (ErrSchema) and mixed primitive merge lists.
func kubernetesByDesign(err error, c genTriple) bool {
	if errors.Is(err, strategicpatch.ErrSchema) {
		return true
	}
	return errors.Is(err, strategicpatch.ErrType) &&
		mixedMergeLists(c.st, c.origV, c.modV, c.cV)
}

// offShape reports a value the Go type does not allow: a list or a map
// where the type has a scalar, a scalar or list where it has a struct or a
// map, an unknown struct field (the generator writes a few on purpose).
func offShape(v any, s *shape) bool {
	if s == nil {
		return true
	}
	switch v := v.(type) {
	case map[string]any:
		switch s.kind {
		case sStruct:
			for k, x := range v {
				i := slices.IndexFunc(s.fields, func(f field) bool { return f.name == k })
				if i < 0 || offShape(x, s.fields[i].s) {
					return true
				}
			}
			return false
		case sStrMap:
			for _, x := range v {
				if offShape(x, s.elem) {
					return true
				}
			}
			return false
		}
		return true
	case []any:
		if s.kind != sMergeMaps && s.kind != sMergePrims && s.kind != sReplaceList {
			return true
		}
		for _, x := range v {
			if s.kind != sMergePrims && offShape(x, s.elem) {
				return true
			}
		}
		return false
	}
	return s.kind != sScalar && s.kind != sMergePrims
}

// sortedKeys lists a map's keys in order: the walkers visit maps in a fixed
// order, so that a fuzz input covers the same code every time it runs.
func sortedKeys(m map[string]any) []string {
	return slices.Sorted(maps.Keys(m))
}
