package schema_test

import (
	"errors"
	"testing"

	"github.com/stratadev/strata/schema"
)

func TestOpenAPIV2Fields(t *testing.T) {
	doc := loadTestdata(t, "openapi-v2.yaml")
	if doc.Format != schema.OpenAPIV2 {
		t.Fatalf("format %v", doc.Format)
	}
	root, ok := doc.ForGVK("example.com", "v1", "Widget")
	if !ok {
		t.Fatal("no root type for example.com/v1 Widget")
	}
	if byName, _ := doc.ByName("example.v1.Widget"); byName != root {
		t.Errorf("ByName and ForGVK disagree")
	}
	checkFields(t, root, []fieldCase{
		{path: "metadata.finalizers", ok: true, strategy: schema.Merge},
		{path: "metadata.labels.app", ok: true},
		{path: "metadata.nope", ok: false},
		{path: "spec.containers", ok: true, strategy: schema.Merge, keys: []string{"name"}},
		{path: "spec.containers[].env", ok: true, strategy: schema.Merge, keys: []string{"name"}},
		{path: "spec.containers[].args", ok: true},
		{path: "spec.containers[].unknown", ok: false},
		{path: "spec.ports", ok: true, strategy: schema.Merge, keys: []string{"port", "protocol"}},
		{path: "spec.volumes", ok: true, strategy: schema.Merge | schema.RetainKeys, keys: []string{"name"}},
		{path: "spec.volumes[].hostPath.path", ok: true},
		{path: "spec.strategy", ok: true, strategy: schema.RetainKeys},
		{path: "spec.strategy.rollingUpdate.maxSurge", ok: true},
		{path: "spec.tags", ok: true},
		{path: "spec.conditions", ok: true},
		{path: "spec.selector.anyKey", ok: true, strategy: schema.Merge},
		{path: "spec.extra.anything", ok: true, noType: true},
		{path: "spec.children[].children[].containers", ok: true, strategy: schema.Merge, keys: []string{"name"}},
		{path: "spec.mainPort.protocol", ok: true},
		{path: "spec.mainPort.nope", ok: false},
		{path: "spec.config.protocol", ok: true},
		{path: "spec.config.rollingUpdate", ok: true},
		{path: "spec.config.nope", ok: false},
		{path: "spec.unknown", ok: false},
	})
	free, _ := doc.ByName("example.v1.Free")
	checkFields(t, free, []fieldCase{{path: "whatever", ok: true, noType: true}})
	if _, ok := doc.ByName("example.v1.Nope"); ok {
		t.Error("ByName found a missing definition")
	}
	if _, ok := doc.ForGVK("example.com", "v2", "Widget"); ok {
		t.Error("ForGVK found a missing kind")
	}
}

func TestOpenAPIV2JSON(t *testing.T) {
	doc, err := schema.Load("s.json", []byte(`{"swagger": "2.0", "definitions": {"A": {
		"x-kubernetes-group-version-kind": [{"group": "", "version": "v1", "kind": "A"}],
		"properties": {"l": {"type": "array", "items": {"type": "object"},
			"x-kubernetes-patch-strategy": "merge", "x-kubernetes-patch-merge-key": "a, b"}}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	root, ok := doc.ForGVK("", "v1", "A")
	if !ok {
		t.Fatal("no root")
	}
	checkFields(t, root, []fieldCase{{path: "l", ok: true, strategy: schema.Merge, keys: []string{"a", "b"}}})
}

func TestOpenAPIV2Errors(t *testing.T) {
	checkErrors(t, []errorCase{
		{name: "unknown strategy", doc: `
swagger: "2.0"
definitions:
  Foo:
    properties:
      ports: {type: array, x-kubernetes-patch-strategy: mrge}`,
			want: `schema.yaml: definitions.Foo.properties.ports: x-kubernetes-patch-strategy "mrge": unknown patch strategy`},
		{name: "unknown strategy part", doc: `
swagger: "2.0"
definitions:
  io.k8s.Foo:
    properties:
      ports: {type: array, x-kubernetes-patch-strategy: "merge,retainkeys"}`,
			want: `schema.yaml: definitions["io.k8s.Foo"].properties.ports: x-kubernetes-patch-strategy "merge,retainkeys": unknown patch strategy "retainkeys"`},
		{name: "strategy not a string", doc: `
swagger: "2.0"
definitions:
  Foo:
    properties:
      ports: {type: array, x-kubernetes-patch-strategy: [merge]}`,
			want: `schema.yaml: definitions.Foo.properties.ports: x-kubernetes-patch-strategy: must be a string, not a list`},
		{name: "merge key not a string", doc: `
swagger: "2.0"
definitions:
  Foo:
    properties:
      ports: {type: array, x-kubernetes-patch-merge-key: 5}`,
			want: `schema.yaml: definitions.Foo.properties.ports: x-kubernetes-patch-merge-key: must be a string, not a number`},
		{name: "dangling ref", doc: `
swagger: "2.0"
definitions:
  Foo:
    properties:
      bar: {$ref: "#/definitions/Bar"}`,
			want: `schema.yaml: definitions.Foo.properties.bar.$ref: "#/definitions/Bar": no such schema`},
		{name: "foreign ref", doc: `
swagger: "2.0"
definitions:
  Foo:
    items: {$ref: "other.json#/definitions/Bar"}`,
			want: `schema.yaml: definitions.Foo.items.$ref: "other.json#/definitions/Bar": only local references to #/definitions/... are supported`},
		{name: "ref cycle", doc: `
swagger: "2.0"
definitions:
  A: {$ref: "#/definitions/B"}
  B: {allOf: [{$ref: "#/definitions/A"}]}`,
			want: `schema.yaml: definitions.A: $ref cycle: #/definitions/A -> #/definitions/B -> #/definitions/B/allOf/0 -> #/definitions/A`},
		{name: "self ref", doc: `
swagger: "2.0"
definitions:
  A: {$ref: "#/definitions/A"}`,
			want: `schema.yaml: definitions.A: $ref cycle: #/definitions/A -> #/definitions/A`},
		{name: "schema not an object", doc: `
swagger: "2.0"
definitions:
  A: {properties: {b: 3}}`,
			want: `schema.yaml: definitions.A.properties.b: schema must be an object, not a number`},
		{name: "properties not an object", doc: `
swagger: "2.0"
definitions:
  A: {properties: [b]}`,
			want: `schema.yaml: definitions.A.properties: must be an object, not a list`},
		{name: "bad gvk", doc: `
swagger: "2.0"
definitions:
  A: {x-kubernetes-group-version-kind: [{group: g, kind: A}]}`,
			want: `schema.yaml: definitions.A.x-kubernetes-group-version-kind[0]: want {group, version, kind} strings, with version and kind non-empty`},
		{name: "wrong version", doc: `swagger: "1.2"`,
			want: `schema.yaml: swagger: "1.2": want "2.0"`},
		{name: "definitions not an object", doc: `{"swagger": "2.0", "definitions": []}`,
			want: `schema.yaml: definitions: must be an object, not a list`},
		{name: "two errors", doc: `
swagger: "2.0"
definitions:
  A: {properties: {b: {x-kubernetes-patch-strategy: x}, c: {$ref: "#/definitions/C"}}}`,
			want: `schema.yaml: definitions.A.properties.b: x-kubernetes-patch-strategy "x": unknown patch strategy` + "\n" +
				`schema.yaml: definitions.A.properties.c.$ref: "#/definitions/C": no such schema`},
	})
}

func TestErrorsUnwrap(t *testing.T) {
	_, err := schema.Load("s.yaml", []byte("swagger: '2.0'\ndefinitions: {A: {x-kubernetes-patch-strategy: nope}}"))
	var se *schema.StrategyError
	if !errors.As(err, &se) || se.Part != "nope" {
		t.Errorf("errors.As(%v, *StrategyError) = %v", err, se)
	}
	var le *schema.Error
	if !errors.As(err, &le) || le.File != "s.yaml" || le.Path != "definitions.A" {
		t.Errorf("errors.As(%v, *Error) = %+v", err, le)
	}
}
