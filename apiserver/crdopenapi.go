package apiserver

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apiextensions-apiserver/pkg/controller/openapi/builder"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/stratadev/strata/apiserver/openapi"
)

// publishOpenAPI replaces the OpenAPI documents of the group-versions a
// CRD serves now (now) or served before (old; either may be nil), with every custom kind of
// each as next serves them. A schema that cannot be published is logged;
// the resources are served regardless, as kube-apiserver does.
func (c *crdController) publishOpenAPI(next *served, now, old *installedCRD) {
	var all []schema.GroupVersion
	for _, entry := range []*installedCRD{now, old} {
		if entry == nil {
			continue
		}
		for _, gvr := range entry.gvrs {
			if gv := gvr.GroupVersion(); !slices.Contains(all, gv) {
				all = append(all, gv)
			}
		}
	}
	svc, err := c.s.openapi.wait(c.s.ctx)
	if err != nil {
		c.s.log.Error("publishing the OpenAPI schema of custom resources", "err", err)
		return
	}
	for _, gv := range all {
		resources, defs, err := customOpenAPI(next, gv)
		if err == nil {
			err = svc.SetGroupVersion(gv, resources, defs)
		}
		if err != nil {
			c.s.log.Error("publishing the OpenAPI schema of custom resources", "groupVersion", gv.String(), "err", err)
		}
	}
}

// customOpenAPI describes the custom kinds served in gv: resources for the
// paths and, per kind, the schema kube-apiserver publishes for it (built
// by apiextensions-apiserver's OpenAPI builder, with the list-type and
// patch extensions of the CRD's schema).
func customOpenAPI(next *served, gv schema.GroupVersion) ([]openapi.Resource, map[string]spec.Schema, error) {
	var resources []openapi.Resource
	defs := map[string]spec.Schema{}
	for _, r := range next.byGroup[gv.Group] {
		k := r.kind
		crd := k.CRD()
		if crd == nil || k.GVK.Version != gv.Version {
			continue
		}
		sw, err := builder.BuildOpenAPIV2(crd, gv.Version, builder.Options{V2: true})
		if err != nil {
			return nil, nil, fmt.Errorf("CRD %s version %s: %w", crd.Name, gv.Version, err)
		}
		name := definitionName(k.GVK)
		def, ok := sw.Definitions[name]
		if !ok {
			return nil, nil, fmt.Errorf("CRD %s version %s: the builder made no definition %s", crd.Name, gv.Version, name)
		}
		for _, e := range k.SchemaExtensions() {
			def = withExtension(def, e.Path, e.Key, e.Value)
		}
		defs[k.GVK.Kind] = def
		resources = append(resources, openAPIResource(k))
	}
	return resources, defs, nil
}

// withExtension sets an extension on the schema at path (property names
// after "properties", "items", "additionalProperties") below s.
func withExtension(s spec.Schema, path []string, key string, value any) spec.Schema {
	if len(path) == 0 {
		s.AddExtension(key, value)
		return s
	}
	switch path[0] {
	case "properties":
		if len(path) > 1 {
			if p, ok := s.Properties[path[1]]; ok {
				s.Properties[path[1]] = withExtension(p, path[2:], key, value)
			}
		}
	case "items":
		if s.Items != nil && s.Items.Schema != nil {
			item := withExtension(*s.Items.Schema, path[1:], key, value)
			s.Items = &spec.SchemaOrArray{Schema: &item}
		}
	case "additionalProperties":
		if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
			add := withExtension(*s.AdditionalProperties.Schema, path[1:], key, value)
			s.AdditionalProperties = &spec.SchemaOrBool{Allows: true, Schema: &add}
		}
	}
	return s
}

// definitionName is how kube-apiserver names a custom kind's definition:
// the group reversed, the version, the kind ("com.example.v1.Widget").
func definitionName(gvk schema.GroupVersionKind) string {
	parts := strings.Split(gvk.Group, ".")
	slices.Reverse(parts)
	return strings.Join(parts, ".") + "." + gvk.Version + "." + gvk.Kind
}
