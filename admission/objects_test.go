package admission

import (
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// TestCustomEquivalents: a custom resource's equivalents are its CRD's
// served versions, for the resource and its status, as
// apiextensions-apiserver registers them; other resources and
// subresources have none.
func TestCustomEquivalents(t *testing.T) {
	v1 := schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}
	v2 := schema.GroupVersionKind{Group: "example.com", Version: "v2", Kind: "Widget"}
	m := customObjects("widgets", []schema.GroupVersionKind{v1, v2}).GetEquivalentResourceMapper()
	widgets := func(version string) schema.GroupVersionResource {
		return schema.GroupVersionResource{Group: "example.com", Version: version, Resource: "widgets"}
	}
	both := []schema.GroupVersionResource{widgets("v1"), widgets("v2")}
	cases := []struct {
		resource schema.GroupVersionResource
		sub      string
		kind     schema.GroupVersionKind
		equiv    []schema.GroupVersionResource
	}{
		{widgets("v1"), "", v1, both},
		{widgets("v2"), "", v2, both},
		{widgets("v2"), "status", v2, both},
		{widgets("v2"), "scale", schema.GroupVersionKind{}, nil},
		{widgets("v3"), "", schema.GroupVersionKind{}, nil},
		{schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "gadgets"}, "", schema.GroupVersionKind{}, nil},
	}
	for _, c := range cases {
		if got := m.KindFor(c.resource, c.sub); got != c.kind {
			t.Errorf("KindFor(%v, %q) = %v, want %v", c.resource, c.sub, got, c.kind)
		}
		if got := m.EquivalentResourcesFor(c.resource, c.sub); !slices.Equal(got, c.equiv) {
			t.Errorf("EquivalentResourcesFor(%v, %q) = %v, want %v", c.resource, c.sub, got, c.equiv)
		}
	}
}
