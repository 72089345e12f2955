package openapi

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	apiopenapi "k8s.io/apiserver/pkg/endpoints/openapi"
	utilopenapi "k8s.io/apiserver/pkg/util/openapi"
	"k8s.io/kube-openapi/pkg/common"
	"k8s.io/kube-openapi/pkg/schemamutation"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

const (
	v2RefPrefix = "#/definitions/"
	v3RefPrefix = "#/components/schemas/"
)

// definitions holds the definitions the builders draw from: the generated
// ones, computed once per document flavour because their $refs differ, plus
// the extra definitions of kinds the scheme does not know.
//
// The maps are shared by every build and changed by SetGroupVersion, so all
// use is serialised by Service.defsMu. The builders write into the top-level
// extensions of the definitions they copy (they copy schemas shallowly); see
// ownExtensions for why that stays safe while documents are served.
type definitions struct {
	v3 map[string]common.OpenAPIDefinition
	// generatedV2 are the generated definitions with v2 $refs, made when
	// /openapi/v2 is first built (a twentieth of a second of CPU that
	// most servers never need); extraV2 the extra kinds' v2 definitions.
	generatedV2 func() map[string]common.OpenAPIDefinition
	extraV2     map[string]common.OpenAPIDefinition
	namer       *apiopenapi.DefinitionNamer
	// extra maps the definition name of each extra kind to its kind.
	extra map[string]schema.GroupVersionKind
}

// newDefinitions names definitions as kube-apiserver does (DefinitionNamer
// over the scheme, adding x-kubernetes-group-version-kind) and drops the
// parts of disabled features, as kube-apiserver's
// GetOpenAPIDefinitionsWithoutDisabledFeatures does.
func newDefinitions(get common.GetOpenAPIDefinitions, scheme *runtime.Scheme) (*definitions, error) {
	// NewDefinitionNamer exits the process on a kind it cannot name; ask
	// first so that such a scheme is an error instead.
	for gvk := range scheme.AllKnownTypes() {
		if _, err := scheme.ToOpenAPIDefinitionName(gvk); err != nil {
			return nil, fmt.Errorf("openapi: scheme kind %v has no definition name: %w", gvk, err)
		}
	}
	d := &definitions{
		namer:   apiopenapi.NewDefinitionNamer(scheme),
		extra:   map[string]schema.GroupVersionKind{},
		extraV2: map[string]common.OpenAPIDefinition{},
	}
	get = utilopenapi.GetOpenAPIDefinitionsWithoutDisabledFeatures(get)
	d.v3 = get(d.refCallback(v3RefPrefix))
	d.generatedV2 = sync.OnceValue(func() map[string]common.OpenAPIDefinition {
		return get(d.refCallback(v2RefPrefix))
	})
	return d, nil
}

// v2 is every definition with v2 $refs: the generated ones and the extra
// kinds'.
func (d *definitions) v2() map[string]common.OpenAPIDefinition {
	all := maps.Clone(d.generatedV2())
	maps.Copy(all, d.extraV2)
	return all
}

func (d *definitions) refCallback(prefix string) common.ReferenceCallback {
	return func(name string) spec.Ref {
		defName, _ := d.GetDefinitionName(name)
		return spec.MustCreateRef(prefix + common.EscapeJsonPointer(defName))
	}
}

// GetDefinitionName is the builders' namer: extra kinds carry their own GVK,
// everything else is named by the scheme.
func (d *definitions) GetDefinitionName(name string) (string, spec.Extensions) {
	if gvk, ok := d.extra[name]; ok {
		return name, spec.Extensions{gvkExtensionKey: gvkExtension(gvk)}
	}
	return d.namer.GetDefinitionName(name)
}

const gvkExtensionKey = "x-kubernetes-group-version-kind"

// extraDefinition is a raw schema for a kind the scheme does not know, in
// both flavours, with the definitions it refers to.
type extraDefinition struct {
	gvk    schema.GroupVersionKind
	v2, v3 spec.Schema
	deps   []string
}

// newExtraDefinition checks that every $ref of s (written with the v2 prefix,
// "#/definitions/...") names a generated definition or one in local, and
// derives the v3 flavour.
func (d *definitions) newExtraDefinition(gvk schema.GroupVersionKind, s spec.Schema, local map[string]bool) (extraDefinition, error) {
	deps := map[string]bool{}
	var refErr error
	walk := func(rewrite func(name string) string) *spec.Schema {
		w := schemamutation.Walker{
			SchemaCallback: schemamutation.SchemaCallBackNoop,
			RefCallback: func(ref *spec.Ref) *spec.Ref {
				r := ref.String()
				if r == "" {
					return ref
				}
				name, ok := strings.CutPrefix(r, v2RefPrefix)
				if !ok {
					refErr = fmt.Errorf("$ref %q does not start with %q", r, v2RefPrefix)
					return ref
				}
				name = unescapeJSONPointer(name)
				if _, known := d.v3[name]; !known && !local[name] {
					refErr = fmt.Errorf("$ref %q names no known definition", r)
					return ref
				}
				deps[name] = true
				if rewrite == nil {
					return ref
				}
				out, err := spec.NewRef(rewrite(name))
				if err != nil {
					refErr = fmt.Errorf("$ref %q: %w", r, err)
					return ref
				}
				return &out
			},
		}
		return w.WalkSchema(&s)
	}
	walk(nil)
	if refErr != nil {
		return extraDefinition{}, refErr
	}
	v3 := walk(func(name string) string { return v3RefPrefix + common.EscapeJsonPointer(name) })
	if refErr != nil {
		return extraDefinition{}, refErr
	}
	return extraDefinition{gvk: gvk, v2: s, v3: *v3, deps: slices.Sorted(maps.Keys(deps))}, nil
}

// setExtra replaces the extra definitions named in old by those in next and
// returns a function that undoes it.
func (d *definitions) setExtra(old []string, next map[string]extraDefinition) (undo func()) {
	saved := map[string]struct {
		v2, v3 common.OpenAPIDefinition
		gvk    schema.GroupVersionKind
	}{}
	for _, name := range old {
		saved[name] = struct {
			v2, v3 common.OpenAPIDefinition
			gvk    schema.GroupVersionKind
		}{d.extraV2[name], d.v3[name], d.extra[name]}
		delete(d.extraV2, name)
		delete(d.v3, name)
		delete(d.extra, name)
	}
	for name, e := range next {
		d.extraV2[name] = common.OpenAPIDefinition{Schema: e.v2, Dependencies: e.deps}
		d.v3[name] = common.OpenAPIDefinition{Schema: e.v3, Dependencies: e.deps}
		d.extra[name] = e.gvk
	}
	return func() {
		for name := range next {
			delete(d.extraV2, name)
			delete(d.v3, name)
			delete(d.extra, name)
		}
		for name, s := range saved {
			d.extraV2[name], d.v3[name], d.extra[name] = s.v2, s.v3, s.gvk
		}
	}
}

// listSchema is the schema of the list kind of an extra kind that has none of
// its own, as k8s.io/apiextensions-apiserver builds it for a custom resource.
func listSchema(item, list schema.GroupVersionKind) spec.Schema {
	s := new(spec.Schema).
		Typed("object", "").
		WithDescription(fmt.Sprintf("%s is a list of %s", list.Kind, item.Kind)).
		WithRequired("items").
		SetProperty("apiVersion", *spec.StringProperty().WithDescription(apiVersionDoc)).
		SetProperty("kind", *spec.StringProperty().WithDescription(kindDoc)).
		SetProperty("items", *spec.ArrayProperty(spec.RefSchema(v2RefPrefix + modelName(item))).
			WithDescription(fmt.Sprintf("List of %s.", item.Kind))).
		SetProperty("metadata", *spec.RefSchema(v2RefPrefix + "io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta").
			WithDescription("Standard list metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds"))
	return *s
}

const (
	apiVersionDoc = "APIVersion defines the versioned schema of this representation of an object. Servers should convert recognized schemas to the latest internal value, and may reject unrecognized values. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources"
	kindDoc       = "Kind is a string value representing the REST resource this object represents. Servers may infer this from the endpoint the client submits requests to. Cannot be updated. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds"
)

func unescapeJSONPointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~1", "/"), "~0", "~")
}
