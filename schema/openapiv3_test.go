package schema_test

import (
	"testing"

	"github.com/stratadev/strata/schema"
)

func TestOpenAPIV3Fields(t *testing.T) {
	doc := loadTestdata(t, "openapi-v3.yaml")
	if doc.Format != schema.OpenAPIV3 {
		t.Fatalf("format %v", doc.Format)
	}
	for _, version := range []string{"v1", "v1beta1"} {
		if _, ok := doc.ForGVK("example.com", version, "Gadget"); !ok {
			t.Errorf("no root type for example.com/%s Gadget", version)
		}
	}
	root, _ := doc.ForGVK("example.com", "v1", "Gadget")
	checkFields(t, root, []fieldCase{
		{path: "spec.ports", ok: true, strategy: schema.Merge, keys: []string{"port", "protocol"}},
		{path: "spec.ports[].protocol", ok: true},
		{path: "spec.servicePorts", ok: true, strategy: schema.Merge, keys: []string{"port"}},
		{path: "spec.finalizers", ok: true, strategy: schema.Merge},
		{path: "spec.objectSet", ok: true},
		{path: "spec.args", ok: true},
		{path: "spec.selector", ok: true}, // map-type atomic is not obeyed
		{path: "spec.labels", ok: true},
		{path: "spec.secretRef", ok: true},
		{path: "spec.secretRef.key", ok: true},
		{path: "spec.volumes", ok: true, strategy: schema.Merge | schema.RetainKeys, keys: []string{"name"}},
		{path: "spec.volumes[].name", ok: true},
		{path: "spec.nope", ok: false},
	})
}

func TestOpenAPIV3Errors(t *testing.T) {
	checkErrors(t, []errorCase{
		{name: "unknown list type", doc: `
openapi: 3.0.0
components:
  schemas:
    Foo:
      properties:
        ports: {type: array, x-kubernetes-list-type: mapp}`,
			want: `schema.yaml: components.schemas.Foo.properties.ports: x-kubernetes-list-type "mapp": want atomic, set or map`},
		{name: "map without keys", doc: `
openapi: 3.0.0
components:
  schemas:
    Foo:
      properties:
        ports: {type: array, x-kubernetes-list-type: map}`,
			want: `schema.yaml: components.schemas.Foo.properties.ports: x-kubernetes-list-type map needs a non-empty x-kubernetes-list-map-keys`},
		{name: "map keys not strings", doc: `
openapi: 3.0.0
components:
  schemas:
    Foo:
      properties:
        ports: {type: array, x-kubernetes-list-type: map, x-kubernetes-list-map-keys: [port, 7]}`,
			want: `schema.yaml: components.schemas.Foo.properties.ports.x-kubernetes-list-map-keys[1]: must be a non-empty string, not a number`},
		{name: "map keys a string", doc: `
openapi: 3.0.0
components:
  schemas:
    Foo:
      properties:
        ports: {type: array, x-kubernetes-list-type: map, x-kubernetes-list-map-keys: port}`,
			want: `schema.yaml: components.schemas.Foo.properties.ports: x-kubernetes-list-map-keys: must be a list of strings, not a string` + "\n" +
				`schema.yaml: components.schemas.Foo.properties.ports: x-kubernetes-list-type map needs a non-empty x-kubernetes-list-map-keys`},
		{name: "unknown map type", doc: `
openapi: 3.0.0
components:
  schemas:
    Foo: {x-kubernetes-map-type: true}`,
			want: `schema.yaml: components.schemas.Foo: x-kubernetes-map-type a boolean: want atomic or granular`},
		{name: "v2 reference in v3", doc: `
openapi: 3.0.0
components:
  schemas:
    Foo: {$ref: "#/definitions/Bar"}`,
			want: `schema.yaml: components.schemas.Foo.$ref: "#/definitions/Bar": only local references to #/components/schemas/... are supported`},
		{name: "ref cycle through allOf", doc: `
openapi: 3.0.0
components:
  schemas:
    Foo: {allOf: [{$ref: "#/components/schemas/Foo"}]}`,
			want: `schema.yaml: components.schemas.Foo: $ref cycle: #/components/schemas/Foo -> #/components/schemas/Foo/allOf/0 -> #/components/schemas/Foo`},
		{name: "wrong version", doc: `openapi: 2.0.0`,
			want: `schema.yaml: openapi: "2.0.0": want 3.x`},
		{name: "preserve not a bool", doc: `
openapi: 3.0.0
components:
  schemas:
    Foo: {x-kubernetes-preserve-unknown-fields: "yes"}`,
			want: `schema.yaml: components.schemas.Foo: x-kubernetes-preserve-unknown-fields: must be a boolean, not a string`},
	})
}
