package schema

import (
	"sort"
	"strings"
)

// Format is the kind of file a Document was read from.
type Format uint8

const (
	// OpenAPIV2 is a swagger 2.0 document; schemas are under "definitions".
	OpenAPIV2 Format = iota + 1
	// OpenAPIV3 is an OpenAPI 3.x document; schemas are under
	// "components.schemas".
	OpenAPIV3
	// CRD is one or more CustomResourceDefinition manifests.
	CRD
)

// String names the format ("OpenAPI v2").
func (f Format) String() string {
	switch f {
	case OpenAPIV2:
		return "OpenAPI v2"
	case OpenAPIV3:
		return "OpenAPI v3"
	case CRD:
		return "CustomResourceDefinition"
	}
	return "unknown format"
}

// GVK is an API group, version and kind; the core group is "".
type GVK struct {
	Group, Version, Kind string
}

// APIVersion returns the apiVersion field value of the GVK: "apps/v1", "v1".
func (g GVK) APIVersion() string {
	if g.Group == "" {
		return g.Version
	}
	return g.Group + "/" + g.Version
}

// String returns the GVK as "apps/v1, Kind=Deployment".
func (g GVK) String() string { return g.APIVersion() + ", Kind=" + g.Kind }

// ParseAPIVersion splits an apiVersion ("apps/v1", "v1") into group and
// version.
func ParseAPIVersion(apiVersion string) (group, version string) {
	if g, v, ok := strings.Cut(apiVersion, "/"); ok {
		return g, v
	}
	return "", apiVersion
}

// Document is a schema file loaded by Load: its named schemas and the root
// schemas of the kinds it describes.
type Document struct {
	// File is the name the document was loaded under.
	File string
	// Format is the kind of file it was.
	Format Format
	defs   map[string]*node
	kinds  map[GVK]*node
}

// ForGVK returns the root schema of objects of the given group, version and
// kind: the definition carrying x-kubernetes-group-version-kind for it, or the
// CRD version's schema.
func (d *Document) ForGVK(group, version, kind string) (Type, bool) {
	n, ok := d.kinds[GVK{group, version, kind}]
	return n.typ(), ok
}

// ByName returns a named schema: a definitions key (OpenAPI v2), a
// components.schemas key (OpenAPI v3), or for a CRD the name Kubernetes
// publishes it under, the reversed group, the version and the kind
// ("com.example.stable.v1.CronTab").
func (d *Document) ByName(def string) (Type, bool) {
	n, ok := d.defs[def]
	return n.typ(), ok
}

// Kinds returns the kinds the document has root schemas for, sorted.
func (d *Document) Kinds() []GVK {
	kinds := make([]GVK, 0, len(d.kinds))
	for k := range d.kinds {
		kinds = append(kinds, k)
	}
	sort.Slice(kinds, func(i, j int) bool {
		a, b := kinds[i], kinds[j]
		if a.Group != b.Group {
			return a.Group < b.Group
		}
		if a.Version != b.Version {
			return a.Version < b.Version
		}
		return a.Kind < b.Kind
	})
	return kinds
}

// Set is several documents searched in order, as given by a repeated
// --schema flag.
type Set []*Document

// ForGVK returns the root schema for the kind from the first document that
// has one.
func (s Set) ForGVK(group, version, kind string) (Type, bool) {
	for _, d := range s {
		if t, ok := d.ForGVK(group, version, kind); ok {
			return t, true
		}
	}
	return nil, false
}

// ByName returns the named schema from the first document that has it.
func (s Set) ByName(def string) (Type, bool) {
	for _, d := range s {
		if t, ok := d.ByName(def); ok {
			return t, true
		}
	}
	return nil, false
}
