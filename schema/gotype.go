package schema

import (
	"reflect"
	"strings"
	"sync"
)

// ForGoType returns the schema of a Go type from its struct tags: `json` names
// the field, `patchStrategy` and `patchMergeKey` give its patch metadata, as on
// every k8s.io/api type. Fields are found as encoding/json finds them:
// embedded structs without a JSON name are promoted, and a name that matches
// no field exactly matches one case-insensitively.
func ForGoType(t reflect.Type) Type {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil {
		return nil
	}
	return goType{t}
}

// ForValue returns the schema of v's Go type; see ForGoType.
func ForValue(v any) Type { return ForGoType(reflect.TypeOf(v)) }

type goType struct{ t reflect.Type }

func (g goType) Name() string { return g.t.String() }

func (g goType) Elem() Type {
	switch g.t.Kind() {
	case reflect.Slice, reflect.Array:
		return ForGoType(g.t.Elem())
	}
	return nil
}

func (g goType) Field(name string) (Field, bool) {
	switch g.t.Kind() {
	case reflect.Map:
		return Field{Type: ForGoType(g.t.Elem())}, true
	case reflect.Struct:
		f, ok := structFields(g.t).lookup(name)
		return f, ok
	}
	return Field{}, false
}

// structInfo indexes a struct's JSON fields by name, once per type.
type structInfo struct {
	byName map[string]Field
	names  []string // for the case-insensitive fallback
}

func (s *structInfo) lookup(name string) (Field, bool) {
	if f, ok := s.byName[name]; ok {
		return f, true
	}
	for _, n := range s.names {
		if strings.EqualFold(n, name) {
			return s.byName[n], true
		}
	}
	return Field{}, false
}

var structCache sync.Map // reflect.Type -> *structInfo

func structFields(t reflect.Type) *structInfo {
	if v, ok := structCache.Load(t); ok {
		return v.(*structInfo)
	}
	info := &structInfo{byName: map[string]Field{}}
	collectFields(t, info, map[reflect.Type]bool{})
	v, _ := structCache.LoadOrStore(t, info)
	return v.(*structInfo)
}

// collectFields adds t's JSON fields to info. Fields of shallower structs win
// over promoted ones, as in encoding/json.
func collectFields(t reflect.Type, info *structInfo, seen map[reflect.Type]bool) {
	if seen[t] {
		return
	}
	seen[t] = true
	var embedded []reflect.Type
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		tag := sf.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		ft := sf.Type
		for ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if sf.Anonymous && name == "" && ft.Kind() == reflect.Struct {
			embedded = append(embedded, ft)
			continue
		}
		if !sf.IsExported() {
			continue
		}
		if name == "" {
			name = sf.Name
		}
		if _, dup := info.byName[name]; dup {
			continue
		}
		// A malformed strategy tag is treated as no strategy: struct tags are
		// compiled into the program, not user input.
		st, _ := ParseStrategy(sf.Tag.Get("patchStrategy"))
		info.byName[name] = Field{
			Strategy:  st,
			MergeKeys: ParseMergeKeys(sf.Tag.Get("patchMergeKey")),
			Type:      ForGoType(sf.Type),
		}
		info.names = append(info.names, name)
	}
	for _, et := range embedded {
		collectFields(et, info, seen)
	}
}
