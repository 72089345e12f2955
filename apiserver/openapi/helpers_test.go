package openapi

import (
	"encoding/json"
	"strings"
	"testing"

	"k8s.io/client-go/discovery"
	"k8s.io/kube-openapi/pkg/spec3"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// v3Doc fetches and decodes the JSON v3 document at path through client-go's
// OpenAPI v3 client, as kubectl does.
func v3Doc(t testing.TB, dc *discovery.DiscoveryClient, path string) *spec3.OpenAPI {
	t.Helper()
	paths, err := dc.OpenAPIV3().Paths()
	if err != nil {
		t.Fatalf("OpenAPIV3().Paths(): %v", err)
	}
	gv, ok := paths[path]
	if !ok {
		t.Fatalf("no v3 document %q", path)
	}
	raw, err := gv.Schema("application/json")
	if err != nil {
		t.Fatalf("%s: Schema: %v", path, err)
	}
	doc := &spec3.OpenAPI{}
	if err := json.Unmarshal(raw, doc); err != nil {
		t.Fatalf("%s: decoding: %v", path, err)
	}
	return doc
}

// v2Doc fetches and decodes the JSON v2 document.
func v2Doc(t testing.TB, dc *discovery.DiscoveryClient) *spec.Swagger {
	t.Helper()
	raw, err := dc.RESTClient().Get().AbsPath("/openapi/v2").SetHeader("Accept", "application/json").DoRaw(t.Context())
	if err != nil {
		t.Fatalf("GET /openapi/v2: %v", err)
	}
	sw := &spec.Swagger{}
	if err := json.Unmarshal(raw, sw); err != nil {
		t.Fatalf("decoding /openapi/v2: %v", err)
	}
	return sw
}

// property follows a dotted field path from the definition name of doc and
// returns the last field's schema as written in its parent (so with the
// field's own extensions); refs, bare or wrapped in a one-element allOf, are
// followed on the way.
func property(t testing.TB, doc *spec3.OpenAPI, definition, fieldPath string) *spec.Schema {
	t.Helper()
	cur, ok := doc.Components.Schemas[definition]
	if !ok {
		t.Fatalf("no definition %s", definition)
	}
	for _, name := range strings.Split(fieldPath, ".") {
		cur = resolve(t, doc, cur)
		p, ok := cur.Properties[name]
		if !ok {
			t.Fatalf("%s: no field %q in %s", definition, name, fieldPath)
		}
		cur = &p
	}
	return cur
}

func resolve(t testing.TB, doc *spec3.OpenAPI, s *spec.Schema) *spec.Schema {
	t.Helper()
	for range 32 {
		ref := s.Ref.String()
		if ref == "" && len(s.AllOf) == 1 {
			ref = s.AllOf[0].Ref.String()
		}
		if ref == "" {
			return s
		}
		next, ok := doc.Components.Schemas[strings.TrimPrefix(ref, v3RefPrefix)]
		if !ok {
			t.Fatalf("dangling $ref %s", ref)
		}
		s = next
	}
	t.Fatalf("$ref chain too long")
	return nil
}

// operation returns the operation of method at path, or nil.
func operation(doc *spec3.OpenAPI, path, method string) *spec3.Operation {
	item := doc.Paths.Paths[path]
	if item == nil {
		return nil
	}
	switch method {
	case "GET":
		return item.Get
	case "POST":
		return item.Post
	case "PUT":
		return item.Put
	case "PATCH":
		return item.Patch
	case "DELETE":
		return item.Delete
	}
	return nil
}
