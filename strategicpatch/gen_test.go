package strategicpatch_test

import (
	"encoding/json"
	"maps"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

// This file holds the pseudo-random generator of document/patch pairs that
// the differential test (differential_test.go) and the fuzz targets use.

// Test types for the generator: every kind of field a strategic merge patch
// treats differently, on one small schema.
type (
	genDoc struct {
		Name     string            `json:"name,omitempty"`
		Count    int               `json:"count,omitempty"`
		Enabled  bool              `json:"enabled,omitempty"`
		Items    []genItem         `json:"items,omitempty" patchStrategy:"merge" patchMergeKey:"name"`
		Tags     []string          `json:"tags,omitempty" patchStrategy:"merge"`
		Nums     []int             `json:"nums,omitempty" patchStrategy:"merge"`
		Args     []string          `json:"args,omitempty"`
		Rules    []genRule         `json:"rules,omitempty"`
		Labels   map[string]string `json:"labels,omitempty"`
		Nested   genNested         `json:"nested,omitempty"`
		Strategy genStrategy       `json:"strategy,omitempty" patchStrategy:"retainKeys"`
	}
	genItem struct {
		Name  string      `json:"name"`
		Value string      `json:"value,omitempty"`
		Port  int         `json:"port,omitempty"`
		Meta  *genNested  `json:"meta,omitempty"`
		Subs  []genSub    `json:"subs,omitempty" patchStrategy:"merge" patchMergeKey:"id"`
		Flags []string    `json:"flags,omitempty" patchStrategy:"merge"`
		Mode  genStrategy `json:"mode,omitempty" patchStrategy:"retainKeys"`
	}
	genSub struct {
		ID    string `json:"id"`
		Value string `json:"value,omitempty"`
		Count int    `json:"count,omitempty"`
	}
	genRule struct {
		Key   string `json:"key,omitempty"`
		Value string `json:"value,omitempty"`
	}
	genNested struct {
		A      string            `json:"a,omitempty"`
		B      int               `json:"b,omitempty"`
		Labels map[string]string `json:"labels,omitempty"`
		Deep   *genDeep          `json:"deep,omitempty"`
	}
	genDeep struct {
		X string `json:"x,omitempty"`
		Y bool   `json:"y,omitempty"`
	}
	genStrategy struct {
		Type     string       `json:"type,omitempty"`
		Rolling  *genRolling  `json:"rolling,omitempty"`
		Recreate *genRecreate `json:"recreate,omitempty"`
	}
	genRolling struct {
		MaxSurge       int `json:"maxSurge,omitempty"`
		MaxUnavailable int `json:"maxUnavailable,omitempty"`
	}
	genRecreate struct {
		Wait int `json:"wait,omitempty"`
	}
)

// kubeFields limits the generator, on the Kubernetes types, to these JSON
// field names: the interesting lists and maps, and a few scalars.
var kubeFields = setOfStrings(
	"metadata", "spec", "template", "name", "labels", "annotations", "finalizers", "ownerReferences", "uid", "kind",
	"containers", "initContainers", "image", "args", "command", "env", "value", "ports", "containerPort",
	"protocol", "hostPort", "volumeMounts", "mountPath", "readOnly", "volumes", "configMap", "emptyDir", "medium",
	"secret", "secretName", "hostPath", "path", "tolerations", "key", "operator", "effect", "nodeSelector",
	"restartPolicy", "replicas", "selector", "matchLabels", "strategy", "type", "rollingUpdate", "maxSurge",
	"maxUnavailable", "minReadySeconds", "paused", "serviceAccountName", "hostNetwork", "resources", "limits",
	"requests", "imagePullSecrets", "workingDir",
)

func setOfStrings(s ...string) map[string]bool {
	m := make(map[string]bool, len(s))
	for _, v := range s {
		m[v] = true
	}
	return m
}

type shapeKind uint8

const (
	sScalar shapeKind = iota
	sStruct
	sStrMap
	sMergeMaps
	sMergePrims
	sReplaceList
)

// shape is what the generator knows of a field: enough to write values and
// patches the schema treats in each of its ways.
type shape struct {
	kind   shapeKind
	pool   []any // scalars and primitive lists: the values to pick from
	fields []field
	retain bool // a struct whose maps may carry $retainKeys
	key    string
	elem   *shape
}

type field struct {
	name string
	s    *shape
}

// genSchema is one schema the generator writes cases for.
type genSchema struct {
	name   string
	goType any
	root   *shape
}

var genSchemas = []genSchema{
	{"gendoc", genDoc{}, shapeOf(reflect.TypeOf(genDoc{}), nil, 0)},
	{"deployment", appsv1.Deployment{}, shapeOf(reflect.TypeOf(appsv1.Deployment{}), kubeFields, 0)},
	{"pod", corev1.Pod{}, shapeOf(reflect.TypeOf(corev1.Pod{}), kubeFields, 0)},
}

var (
	jsonMarshaler = reflect.TypeOf((*json.Marshaler)(nil)).Elem()
	strPool       = []any{"a", "b", "c"}
	keyPool       = []any{"a", "b", "c", "d", "e"}
	intPool       = []any{1.0, 2.0, 3.0}
	portPool      = []any{80.0, 443.0, 8080.0, 9090.0}
	boolPool      = []any{true, false}
	intOrStrPool  = []any{1.0, 2.0, "25%"}
	quantityPool  = []any{"1", "2Gi", "500m"}
)

// shapeOf describes Go type t; allow (nil: everything) limits struct fields.
func shapeOf(t reflect.Type, allow map[string]bool, depth int) *shape {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() == reflect.Struct && reflect.PointerTo(t).Implements(jsonMarshaler) {
		if strings.Contains(t.Name(), "IntOrString") {
			return &shape{kind: sScalar, pool: intOrStrPool}
		}
		return &shape{kind: sScalar, pool: quantityPool}
	}
	switch t.Kind() {
	case reflect.String:
		return &shape{kind: sScalar, pool: strPool}
	case reflect.Bool:
		return &shape{kind: sScalar, pool: boolPool}
	case reflect.Int, reflect.Int32, reflect.Int64, reflect.Uint32, reflect.Uint64:
		return &shape{kind: sScalar, pool: intPool}
	case reflect.Map:
		return &shape{kind: sStrMap, elem: shapeOf(t.Elem(), allow, depth+1)}
	case reflect.Struct:
		s := &shape{kind: sStruct}
		if depth > 12 {
			return s
		}
		addFields(s, t, allow, depth)
		return s
	}
	return nil
}

func addFields(s *shape, t reflect.Type, allow map[string]bool, depth int) {
	for i := range t.NumField() {
		sf := t.Field(i)
		tag := sf.Tag.Get("json")
		name, opts, _ := strings.Cut(tag, ",")
		if name == "-" || !sf.IsExported() {
			continue
		}
		if sf.Anonymous && (name == "" || strings.Contains(opts, "inline")) {
			ft := sf.Type
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				addFields(s, ft, allow, depth)
			}
			continue
		}
		if name == "" || (allow != nil && !allow[name]) {
			continue
		}
		strategy := sf.Tag.Get("patchStrategy")
		var fs *shape
		if sf.Type.Kind() == reflect.Slice && sf.Type.Elem().Kind() != reflect.Uint8 {
			elem := shapeOf(sf.Type.Elem(), allow, depth+1)
			if elem == nil {
				continue
			}
			switch {
			case strings.Contains(strategy, "merge") && elem.kind == sStruct:
				key := sf.Tag.Get("patchMergeKey")
				fs = &shape{kind: sMergeMaps, key: key, elem: elem}
				if !slices.ContainsFunc(elem.fields, func(f field) bool { return f.name == key }) {
					continue
				}
			case strings.Contains(strategy, "merge") && elem.kind == sScalar:
				fs = &shape{kind: sMergePrims, pool: elem.pool}
			case elem.kind == sStruct || elem.kind == sScalar:
				fs = &shape{kind: sReplaceList, elem: elem}
			default:
				continue
			}
		} else {
			fs = shapeOf(sf.Type, allow, depth+1)
			if fs == nil {
				continue
			}
		}
		if strings.Contains(strategy, "retainKeys") {
			target := fs
			if fs.kind == sMergeMaps {
				target = fs.elem
			}
			if target.kind == sStruct {
				c := *target
				c.retain = true
				if fs.kind == sMergeMaps {
					fs.elem = &c
				} else {
					fs = &c
				}
			}
		}
		s.fields = append(s.fields, field{name, fs})
	}
}

// keyPoolFor gives the values a merge key takes: few, so that patches and
// documents name the same elements often.
func keyPoolFor(s *shape) []any {
	for _, f := range s.elem.fields {
		if f.name == s.key {
			switch f.s.pool[0].(type) {
			case float64:
				return portPool
			}
		}
	}
	return keyPool
}

func primPool(s *shape) []any {
	if _, ok := s.pool[0].(float64); ok {
		return []any{1.0, 2.0, 3.0, 4.0, 5.0}
	}
	if _, ok := s.pool[0].(bool); ok {
		return s.pool
	}
	return keyPool
}

// gen writes cases from one seeded source.
type gen struct {
	r *rand.Rand
}

func newGen(seed uint64) *gen {
	return &gen{r: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
}

func (g *gen) chance(p float64) bool { return g.r.Float64() < p }
func (g *gen) pick(pool []any) any   { return pool[g.r.IntN(len(pool))] }

// distinct picks up to n distinct values of pool in random order.
func (g *gen) distinct(pool []any, n int) []any {
	p := slices.Clone(pool)
	g.r.Shuffle(len(p), func(i, j int) { p[i], p[j] = p[j], p[i] })
	return p[:min(n, len(p))]
}

// genCase is one generated document and patch.
type genCase struct {
	schema        genSchema
	orig, patch   []byte
	origV, patchV any
}

func (g *gen) next() genCase {
	var sc genSchema
	if g.chance(0.5) {
		sc = genSchemas[0]
	} else {
		sc = genSchemas[1+g.r.IntN(len(genSchemas)-1)]
	}
	doc := g.value(sc.root, 0)
	patch := g.mapPatch(sc.root, doc.(map[string]any), true, 0, false)
	o, _ := json.Marshal(doc)
	p, _ := json.Marshal(patch)
	return genCase{schema: sc, orig: o, patch: p, origV: doc, patchV: patch}
}

// value writes a fresh document value of shape s.
func (g *gen) value(s *shape, depth int) any {
	switch s.kind {
	case sScalar:
		return g.pick(s.pool)
	case sStruct:
		m := map[string]any{}
		p := 0.6 / float64(1+depth/2)
		for _, f := range s.fields {
			if g.chance(p) {
				m[f.name] = g.value(f.s, depth+1)
			}
		}
		return m
	case sStrMap:
		m := map[string]any{}
		for _, k := range g.distinct([]any{"k1", "k2", "k3", "k4"}, g.r.IntN(4)) {
			m[k.(string)] = g.value(s.elem, depth+1)
		}
		return m
	case sMergeMaps:
		l := []any{}
		for _, k := range g.distinct(keyPoolFor(s), g.r.IntN(4)) {
			el := g.value(s.elem, depth+1).(map[string]any)
			el[s.key] = k
			l = append(l, el)
		}
		return l
	case sMergePrims:
		return g.distinct(primPool(s), g.r.IntN(4))
	case sReplaceList:
		l := []any{}
		for range g.r.IntN(3) {
			l = append(l, g.value(s.elem, depth+1))
		}
		return l
	}
	panic("unknown shape")
}

// mapPatch writes a patch for a struct or map value (live may be nil).
// element is set for list elements, where $patch means something else.
func (g *gen) mapPatch(s *shape, live map[string]any, hasLive bool, depth int, element bool) map[string]any {
	p := map[string]any{}
	if s.kind == sStrMap {
		for _, k := range g.distinct([]any{"k1", "k2", "k3", "k4"}, g.r.IntN(3)) {
			if g.chance(0.3) {
				p[k.(string)] = nil
			} else {
				p[k.(string)] = g.value(s.elem, depth+1)
			}
		}
		return p
	}
	prob := 0.5 / float64(1+depth/2)
	for _, f := range s.fields {
		if !g.chance(prob) {
			continue
		}
		lv, has := live[f.name]
		g.fieldPatch(p, f, lv, has, depth)
	}
	if s.retain && g.chance(0.4) {
		var keys []any
		for k, v := range p {
			if v != nil && !strings.HasPrefix(k, "$") {
				keys = append(keys, k)
			}
		}
		for _, f := range s.fields {
			if _, ok := p[f.name]; !ok && g.chance(0.3) {
				keys = append(keys, f.name)
			}
		}
		slices.SortFunc(keys, func(a, b any) int { return strings.Compare(a.(string), b.(string)) })
		if len(keys) > 0 && g.chance(0.15) {
			keys = keys[1:] // a patch field the directive does not retain
		}
		if keys == nil {
			keys = []any{}
		}
		p["$retainKeys"] = keys
	}
	return p
}

func (g *gen) fieldPatch(p map[string]any, f field, lv any, has bool, depth int) {
	if g.chance(0.1) {
		p[f.name] = nil
		return
	}
	s := f.s
	if g.chance(0.03) {
		// A value of another kind than the schema's.
		p[f.name] = g.pick([]any{"x", 1.0, map[string]any{"a": "b"}, []any{"a"}, []any{map[string]any{"a": "b"}}})
		return
	}
	switch s.kind {
	case sScalar:
		p[f.name] = g.pick(s.pool)
	case sStruct, sStrMap:
		lm, _ := lv.(map[string]any)
		switch r := g.r.Float64(); {
		case r < 0.7:
			p[f.name] = g.mapPatch(s, lm, has, depth+1, false)
		case r < 0.8:
			p[f.name] = map[string]any{"$patch": "delete"}
		case r < 0.9:
			m := g.value(s, depth+1).(map[string]any)
			m["$patch"] = "replace"
			p[f.name] = m
		default:
			p[f.name] = g.nulls(g.value(s, depth+1))
		}
	case sReplaceList:
		p[f.name] = g.nulls(g.value(s, depth+1))
	case sMergeMaps:
		ll, _ := lv.([]any)
		g.mergeMapsPatch(p, f, ll, depth)
	case sMergePrims:
		ll, _ := lv.([]any)
		g.primsPatch(p, f, ll)
	}
}

func (g *gen) mergeMapsPatch(p map[string]any, f field, live []any, depth int) {
	s := f.s
	liveEl := map[any]map[string]any{}
	var liveKeys []any
	for _, el := range live {
		m := el.(map[string]any)
		liveEl[m[s.key]] = m
		liveKeys = append(liveKeys, m[s.key])
	}
	var items []any
	var order []any // keys of the patch items, in patch order
	for _, k := range g.distinct(keyPoolFor(s), g.r.IntN(4)) {
		if lm, ok := liveEl[k]; ok {
			if g.chance(0.2) {
				items = append(items, map[string]any{"$patch": "delete", s.key: k})
				continue
			}
			m := g.mapPatch(s.elem, lm, true, depth+1, true)
			m[s.key] = k
			items = append(items, m)
			order = append(order, k)
			continue
		}
		switch r := g.r.Float64(); {
		case r < 0.1:
			items = append(items, map[string]any{"$patch": "delete", s.key: k})
			continue
		case r < 0.6:
			m := g.nulls(g.value(s.elem, depth+1)).(map[string]any)
			m[s.key] = k
			items = append(items, m)
		default:
			m := g.mapPatch(s.elem, nil, false, depth+1, true)
			m[s.key] = k
			items = append(items, m)
		}
		order = append(order, k)
	}
	if g.chance(0.05) {
		items = append(items, map[string]any{"$patch": "replace"})
	}
	if items == nil {
		items = []any{}
	}
	withList := !g.chance(0.1)
	if withList {
		p[f.name] = items
	}
	if g.chance(0.35) || !withList {
		var entries []any
		for _, k := range g.orderEntries(order, liveKeys, keyPoolFor(s)) {
			entries = append(entries, map[string]any{s.key: k})
		}
		if entries == nil {
			entries = []any{}
		}
		p["$setElementOrder/"+f.name] = entries
	}
}

// orderEntries writes a $setElementOrder list for patch items order: the
// items in their order, with live and unknown entries mixed in.
func (g *gen) orderEntries(order, liveKeys, pool []any) []any {
	out := slices.Clone(order)
	for _, k := range g.distinct(pool, g.r.IntN(len(pool)+1)) {
		if slices.Contains(out, k) {
			continue
		}
		if !slices.Contains(liveKeys, k) && !g.chance(0.3) {
			continue
		}
		i := g.r.IntN(len(out) + 1)
		out = slices.Insert(out, i, k)
	}
	if g.chance(0.05) {
		g.r.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	}
	return out
}

func (g *gen) primsPatch(p map[string]any, f field, live []any) {
	pool := primPool(f.s)
	items := g.distinct(pool, g.r.IntN(4))
	withList := !g.chance(0.15)
	if withList {
		p[f.name] = slices.Clone(items)
	} else {
		items = nil
	}
	if g.chance(0.3) {
		var del []any
		for _, v := range g.distinct(pool, 1+g.r.IntN(3)) {
			if !slices.Contains(items, v) {
				del = append(del, v)
			}
		}
		if del == nil {
			del = []any{}
		}
		p["$deleteFromPrimitiveList/"+f.name] = del
	}
	if g.chance(0.3) {
		o := g.orderEntries(items, live, pool)
		if o == nil {
			o = []any{}
		}
		p["$setElementOrder/"+f.name] = o
	}
}

// nulls sets some members of the maps in v (a fresh value) to null.
func (g *gen) nulls(v any) any {
	switch v := v.(type) {
	case map[string]any:
		// Sorted keys: the choices must not follow map iteration order, or
		// a seed would not reproduce its cases.
		for _, k := range slices.Sorted(maps.Keys(v)) {
			if g.chance(0.1) {
				v[k] = nil
			} else {
				g.nulls(v[k])
			}
		}
	case []any:
		for _, x := range v {
			g.nulls(x)
		}
	}
	return v
}
