package schema_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stratadev/strata/schema"
)

func TestLoadFormats(t *testing.T) {
	cases := []struct {
		name, doc string
		want      schema.Format
	}{
		{"v2 yaml", "swagger: '2.0'", schema.OpenAPIV2},
		{"v2 number", "swagger: 2.0", schema.OpenAPIV2},
		{"v2 json", `  {"swagger": "2.0", "definitions": {}}`, schema.OpenAPIV2},
		{"v3 yaml", "openapi: 3.1.0\ncomponents: {schemas: {}}", schema.OpenAPIV3},
		{"v3 json", `{"openapi": "3.0.0"}`, schema.OpenAPIV3},
		{"crd", "---\napiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\n" +
			"spec: {group: g, names: {kind: K}, versions: [{name: v1}]}\n---\n", schema.CRD},
	}
	for _, c := range cases {
		doc, err := schema.Load(c.name, []byte(c.doc))
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if doc.Format != c.want || doc.File != c.name {
			t.Errorf("%s: format %v file %q, want %v", c.name, doc.Format, doc.File, c.want)
		}
	}
}

func TestLoadErrors(t *testing.T) {
	checkErrors(t, []errorCase{
		{name: "empty", doc: "", want: `schema.yaml: no document`},
		{name: "scalar", doc: "hello", want: `schema.yaml: want an object, not a string`},
		{name: "unknown", doc: "kind: Deployment",
			want: `schema.yaml: not an OpenAPI v2 or v3 document nor a CustomResourceDefinition (no "swagger", "openapi" or "kind: CustomResourceDefinition")`},
		{name: "bad json", doc: `{"swagger": `, want: `schema.yaml: invalid JSON: unexpected end of JSON input`},
		{name: "bad yaml", doc: "swagger: [", want: `schema.yaml: invalid YAML: yaml: line 1: did not find expected node content`},
		{name: "two openapi documents", doc: "swagger: '2.0'\n---\nswagger: '2.0'",
			want: `schema.yaml: an OpenAPI document must be the only document in its file`},
	})
}

func TestSetAndLoadFiles(t *testing.T) {
	set, err := schema.LoadFiles(
		filepath.Join("testdata", "openapi-v2.yaml"),
		filepath.Join("testdata", "crd.yaml"),
	)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := set.ForGVK("stable.example.com", "v1", "CronTab"); !ok {
		t.Error("Set.ForGVK: no CronTab")
	}
	if _, ok := set.ByName("example.v1.WidgetSpec"); !ok {
		t.Error("Set.ByName: no WidgetSpec")
	}
	if _, ok := set.ForGVK("", "v1", "Pod"); ok {
		t.Error("Set.ForGVK found a Pod")
	}
	if _, err := schema.LoadFiles("testdata/missing.yaml"); !os.IsNotExist(unwrapAll(err)) {
		t.Errorf("LoadFiles(missing) = %v", err)
	}
}

func unwrapAll(err error) error {
	for {
		u, ok := err.(interface{ Unwrap() error })
		if !ok {
			return err
		}
		err = u.Unwrap()
	}
}

func TestParseAPIVersion(t *testing.T) {
	for in, want := range map[string][2]string{"apps/v1": {"apps", "v1"}, "v1": {"", "v1"}} {
		if g, v := schema.ParseAPIVersion(in); g != want[0] || v != want[1] {
			t.Errorf("ParseAPIVersion(%q) = %q, %q", in, g, v)
		}
	}
	gvk := schema.GVK{Group: "apps", Version: "v1", Kind: "Deployment"}
	if gvk.APIVersion() != "apps/v1" || gvk.String() != "apps/v1, Kind=Deployment" {
		t.Errorf("GVK strings: %q %q", gvk.APIVersion(), gvk)
	}
}

func FuzzLoad(f *testing.F) {
	for _, file := range []string{"openapi-v2.yaml", "openapi-v3.yaml", "crd.yaml"} {
		data, err := os.ReadFile(filepath.Join("testdata", file))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(`{"swagger":"2.0","definitions":{"A":{"$ref":"#/definitions/A"}}}`))
	f.Add([]byte("openapi: 3.0.0\ncomponents: {schemas: {A: {allOf: [{$ref: '#/components/schemas/B'}]}, B: {items: {$ref: '#/components/schemas/A'}}}}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		doc, err := schema.Load("fuzz.yaml", data)
		if err != nil {
			return
		}
		for _, gvk := range doc.Kinds() {
			root, _ := doc.ForGVK(gvk.Group, gvk.Version, gvk.Kind)
			walk(root, 4)
		}
	})
}

// walk asks a type about a few fields, to depth levels.
func walk(t schema.Type, depth int) {
	if t == nil || depth == 0 {
		return
	}
	_ = t.Name()
	walk(t.Elem(), depth-1)
	for _, name := range []string{"spec", "metadata", "a", "items"} {
		if f, ok := t.Field(name); ok {
			walk(f.Type, depth-1)
		}
	}
}
