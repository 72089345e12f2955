package schema

import (
	"slices"
	"strings"
)

// CustomResourceDefinition manifests (apiextensions.k8s.io/v1, and the
// legacy v1beta1 layout). Each served version's schema.openAPIV3Schema is
// compiled with the OpenAPI v3 rules (inline schemas, no $ref); a v1beta1
// spec.validation.openAPIV3Schema serves versions without their own schema.
// A version with no schema at all still has a root type, one that knows no
// field. A version without "served" counts as served.

// loadCRDs loads the CRDs of docs: each a CustomResourceDefinition or a List
// of them.
func loadCRDs(file string, docs []any) (*Document, error) {
	errs := &errorList{file: file}
	l := &crdLoader{
		c:   newCompiler(dialect{topology: true}, errs),
		doc: &Document{File: file, Format: CRD, defs: map[string]*node{}, kinds: map[GVK]*node{}},
	}
	for i, d := range docs {
		path := ""
		if len(docs) > 1 {
			path = index("", i)
		}
		l.manifest(d, path)
	}
	l.c.finishAll()
	if err := errs.err(); err != nil {
		return nil, err
	}
	return l.doc, nil
}

type crdLoader struct {
	c   *compiler
	doc *Document
}

func (l *crdLoader) errs() *errorList { return l.c.errs }

func (l *crdLoader) manifest(v any, path string) {
	m, ok := v.(map[string]any)
	if !ok {
		l.errs().addf(path, "want a CustomResourceDefinition, not %s", describe(v))
		return
	}
	switch m["kind"] {
	case "CustomResourceDefinition":
		l.crd(m, path)
	case "List":
		items, _ := l.list(m, "items", path)
		for i, item := range items {
			l.manifest(item, index(child(path, "items"), i))
		}
	default:
		l.errs().addf(child(path, "kind"), "%s: want CustomResourceDefinition", show(m["kind"]))
	}
}

func (l *crdLoader) crd(m map[string]any, path string) {
	if av, _ := m["apiVersion"].(string); !strings.HasPrefix(av, "apiextensions.k8s.io/") {
		l.errs().addf(child(path, "apiVersion"), "%s: want apiextensions.k8s.io/v1", show(m["apiVersion"]))
	}
	spec, specPath := l.object(m, "spec", path, true)
	names, namesPath := l.object(spec, "names", specPath, true)
	group := l.str(spec, "group", specPath, true)
	kind := l.str(names, "kind", namesPath, true)
	if spec == nil || group == "" || kind == "" {
		return
	}
	var legacy *node
	if val, valPath := l.object(spec, "validation", specPath, false); val != nil {
		if raw := l.schemaAt(val, valPath); raw != nil {
			legacy = l.c.newNode(raw, crdSchemaName(GVK{group, "", kind}), child(valPath, "openAPIV3Schema"))
		}
	}
	if _, ok := spec["versions"]; !ok {
		if v := l.str(spec, "version", specPath, true); v != "" {
			l.addVersion(GVK{group, v, kind}, legacy)
		}
		return
	}
	versions, versionsPath := l.list(spec, "versions", specPath)
	for i, v := range versions {
		l.version(v, index(versionsPath, i), group, kind, legacy)
	}
}

func (l *crdLoader) version(v any, path, group, kind string, legacy *node) {
	m, ok := v.(map[string]any)
	if !ok {
		l.errs().addf(path, "want a version object, not %s", describe(v))
		return
	}
	name := l.str(m, "name", path, true)
	served, ok := m["served"].(bool)
	if _, present := m["served"]; present && !ok {
		l.errs().addf(child(path, "served"), "must be a boolean, not %s", describe(m["served"]))
	}
	if name == "" || (ok && !served) {
		return
	}
	gvk := GVK{group, name, kind}
	n := legacy
	if s, sPath := l.object(m, "schema", path, false); s != nil {
		if raw := l.schemaAt(s, sPath); raw != nil {
			n = l.c.newNode(raw, crdSchemaName(gvk), child(sPath, "openAPIV3Schema"))
		}
	}
	if n == nil {
		n = &node{name: crdSchemaName(gvk), path: path}
	}
	l.addVersion(gvk, n)
}

// schemaAt returns the openAPIV3Schema inside m.
func (l *crdLoader) schemaAt(m map[string]any, path string) any {
	s, _ := l.object(m, "openAPIV3Schema", path, false)
	if s == nil {
		return nil
	}
	return s
}

// addVersion records n as the root schema of gvk; a nil n knows no field.
func (l *crdLoader) addVersion(gvk GVK, n *node) {
	if n == nil {
		n = &node{name: crdSchemaName(gvk)}
	}
	if _, dup := l.doc.kinds[gvk]; dup {
		l.errs().addf(n.path, "%s is defined twice", gvk)
		return
	}
	l.doc.kinds[gvk] = n
	l.doc.defs[crdSchemaName(gvk)] = n
}

// crdSchemaName is the name Kubernetes publishes a CRD version's schema
// under: the reversed group, the version, the kind.
func crdSchemaName(gvk GVK) string {
	parts := strings.Split(gvk.Group, ".")
	slices.Reverse(parts)
	return strings.Join(append(parts, gvk.Version, gvk.Kind), ".")
}

// object returns the object at m[key]; a missing one is an error when
// required.
func (l *crdLoader) object(m map[string]any, key, path string, required bool) (map[string]any, string) {
	path = child(path, key)
	v, ok := m[key]
	if !ok || v == nil {
		if required && m != nil {
			l.errs().addf(path, "required")
		}
		return nil, path
	}
	obj, ok := v.(map[string]any)
	if !ok {
		l.errs().addf(path, "must be an object, not %s", describe(v))
	}
	return obj, path
}

// list returns the list at m[key], nil when missing.
func (l *crdLoader) list(m map[string]any, key, path string) ([]any, string) {
	path = child(path, key)
	v, ok := m[key]
	if !ok || v == nil {
		return nil, path
	}
	list, ok := v.([]any)
	if !ok {
		l.errs().addf(path, "must be a list, not %s", describe(v))
	}
	return list, path
}

// str returns the non-empty string at m[key].
func (l *crdLoader) str(m map[string]any, key, path string, required bool) string {
	if m == nil {
		return ""
	}
	v, ok := m[key]
	s, isStr := v.(string)
	switch {
	case !ok && required:
		l.errs().addf(child(path, key), "required")
	case ok && (!isStr || s == ""):
		l.errs().addf(child(path, key), "must be a non-empty string, not %s", show(v))
	}
	return s
}
