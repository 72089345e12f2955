package schema

import "strings"

// OpenAPI v3 documents. Schemas are under "components.schemas"; a $ref is
// "#/components/schemas/NAME". On top of the v2 rules, list and map topology
// extensions give patch metadata when a field has no x-kubernetes-patch-*
// extension (which, when present, win):
//
//	x-kubernetes-list-type: map + x-kubernetes-list-map-keys: [a, b]
//	                                   merge, by the (multi-field) key a, b
//	x-kubernetes-list-type: set        merge, as a set of primitives
//	x-kubernetes-list-type: atomic     replace (the default strategy)
//	x-kubernetes-map-type: atomic      the object is replaced whole
//
// A set whose elements are objects cannot be merged without keys and is
// replaced.

var openAPIV3 = openAPIFlavour{
	format:      OpenAPIV3,
	versionKey:  "openapi",
	versionWant: "3.x",
	versionOK:   func(v string) bool { return v == "3" || strings.HasPrefix(v, "3.") },
	defsPath:    []string{"components", "schemas"},
	dialect:     dialect{refPrefix: "#/components/schemas/", topology: true},
}

func loadOpenAPIV3(file string, root map[string]any) (*Document, error) {
	return openAPIV3.load(file, root)
}
