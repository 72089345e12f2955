package schema

import "strings"

// OpenAPI v2 (swagger 2.0) documents. Schemas are the "definitions"; a
// $ref is "#/definitions/NAME"; allOf members are folded into the schema that
// lists them (kube-openapi wraps references so). A field's patch metadata
// comes from x-kubernetes-patch-strategy and x-kubernetes-patch-merge-key on
// the field's own schema, or on the schemas it references when it has none.
// The list-type and map-type extensions are not read from v2 documents: as in
// Kubernetes' strategic merge patch, only the patch extensions count.

var openAPIV2 = openAPIFlavour{
	format:      OpenAPIV2,
	versionKey:  "swagger",
	versionWant: `"2.0"`,
	versionOK:   func(v string) bool { return v == "2.0" || v == "2" },
	defsPath:    []string{"definitions"},
	dialect:     dialect{refPrefix: "#/definitions/"},
}

func loadOpenAPIV2(file string, root map[string]any) (*Document, error) {
	return openAPIV2.load(file, root)
}

// openAPIFlavour is what differs between OpenAPI v2 and v3 documents.
type openAPIFlavour struct {
	format      Format
	versionKey  string
	versionWant string
	versionOK   func(string) bool
	defsPath    []string // where the named schemas are
	dialect
}

// load compiles every named schema of the document root and indexes the
// kinds they declare.
func (f *openAPIFlavour) load(file string, root map[string]any) (*Document, error) {
	errs := &errorList{file: file}
	if v := versionString(root[f.versionKey]); !f.versionOK(v) {
		errs.addf(f.versionKey, "%s: want %s", show(root[f.versionKey]), f.versionWant)
		return nil, errs.err()
	}
	defs, path := f.definitions(root, errs)
	c := newCompiler(f.dialect, errs)
	names := c.declare(defs, path)
	doc := &Document{File: file, Format: f.format, defs: c.defs, kinds: map[GVK]*node{}}
	for _, name := range names {
		n := c.defs[name]
		c.fill(n, defs[name])
		if m, ok := defs[name].(map[string]any); ok {
			for _, gvk := range readGVKs(m, n.path, errs) {
				if _, dup := doc.kinds[gvk]; !dup {
					doc.kinds[gvk] = n
				}
			}
		}
	}
	c.finishAll()
	if err := errs.err(); err != nil {
		return nil, err
	}
	return doc, nil
}

// definitions finds the map of named schemas, absent meaning none.
func (f *openAPIFlavour) definitions(root map[string]any, errs *errorList) (map[string]any, string) {
	var v any = root
	path := ""
	for _, key := range f.defsPath {
		m, ok := v.(map[string]any)
		if !ok {
			errs.addf(path, "must be an object, not %s", describe(v))
			return nil, path
		}
		v, path = m[key], child(path, key)
		if v == nil {
			return nil, path
		}
	}
	defs, ok := v.(map[string]any)
	if !ok {
		errs.addf(path, "must be an object, not %s", describe(v))
	}
	return defs, path
}

// readGVKs reads x-kubernetes-group-version-kind: a list of {group, version,
// kind} objects (or one object).
func readGVKs(m map[string]any, path string, errs *errorList) []GVK {
	v, ok := m[extGVK]
	if !ok {
		return nil
	}
	path = child(path, extGVK)
	list, ok := v.([]any)
	if !ok {
		list = []any{v}
	}
	var gvks []GVK
	for i, item := range list {
		obj, _ := item.(map[string]any)
		g, gok := obj["group"].(string)
		ver, vok := obj["version"].(string)
		k, kok := obj["kind"].(string)
		if obj["group"] == nil {
			g, gok = "", true
		}
		if !gok || !vok || !kok || strings.TrimSpace(ver) == "" || strings.TrimSpace(k) == "" {
			errs.addf(index(path, i), "want {group, version, kind} strings, with version and kind non-empty")
			continue
		}
		gvks = append(gvks, GVK{g, ver, k})
	}
	return gvks
}
