package registry

import (
	"sync"

	strataschema "github.com/stratadev/strata/schema"
	builtinschema "github.com/stratadev/strata/schema/builtin"
)

// customRoot is the root type strategic merge patches of a custom kind
// follow: the CRD's schema, with apiVersion, kind and metadata added as
// apiextensions-apiserver's OpenAPI builder adds them to every custom
// resource's published schema. A CRD's schema need not list them (most do
// not), yet every object has them: without this, a patch of the labels
// failed under --patch-compat kubernetes ("type ... has no field
// \"metadata\""). metadata is always ObjectMeta, whatever the CRD says of
// it (a CRD may only constrain metadata.name and generateName), so that its
// finalizers and ownerReferences merge as in built-in kinds.
type customRoot struct{ strataschema.Type }

// Field answers metadata with ObjectMeta, apiVersion and kind as strings
// when the CRD does not describe them, and the rest from the CRD.
func (r customRoot) Field(name string) (strataschema.Field, bool) {
	switch name {
	case "metadata":
		if f, ok := objectMetaField(); ok {
			return f, true
		}
	case "apiVersion", "kind":
		if f, ok := r.Type.Field(name); ok {
			return f, true
		}
		return strataschema.Field{}, true
	}
	return r.Type.Field(name)
}

// objectMetaField is metadata's field in any built-in kind: ObjectMeta.
var objectMetaField = sync.OnceValues(func() (strataschema.Field, bool) {
	t, ok := builtinschema.ForGVK("", "v1", "ConfigMap")
	if !ok {
		return strataschema.Field{}, false
	}
	return t.Field("metadata")
})
