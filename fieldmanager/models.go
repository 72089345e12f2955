package fieldmanager

import (
	"fmt"
	"reflect"
	"slices"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/controller/openapi/builder"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/managedfields"
	apiopenapi "k8s.io/apiserver/pkg/endpoints/openapi"
	utilopenapi "k8s.io/apiserver/pkg/util/openapi"
	"k8s.io/kube-openapi/pkg/builder3"
	"k8s.io/kube-openapi/pkg/common"
	"k8s.io/kube-openapi/pkg/spec3"
	kubeopenapiutil "k8s.io/kube-openapi/pkg/util"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// BuiltinModels builds the OpenAPI v3 schemas of every external kind that
// scheme knows, and of everything they reference, from defs (normally
// k8s.io/kubernetes/pkg/generated/openapi's): the models kube-apiserver
// builds its type converter from (getOpenAPIModels), named by the same
// DefinitionNamer, so that each carries x-kubernetes-group-version-kind.
func BuiltinModels(defs common.GetOpenAPIDefinitions, scheme *runtime.Scheme) (map[string]*spec.Schema, error) {
	defs = utilopenapi.GetOpenAPIDefinitionsWithoutDisabledFeatures(defs)
	namer := apiopenapi.NewDefinitionNamer(scheme)
	// The definitions are made once (a twentieth of a second of CPU), with
	// the $refs builder3 would give them, for the names and the build.
	known := defs(func(name string) spec.Ref {
		defName, _ := namer.GetDefinitionName(name)
		return spec.MustCreateRef("#/components/schemas/" + common.EscapeJsonPointer(defName))
	})
	var names []string
	for gvk, t := range scheme.AllKnownTypes() {
		if gvk.Version == runtime.APIVersionInternal {
			continue
		}
		name := kubeopenapiutil.GetCanonicalTypeName(reflect.New(t).Interface())
		if _, ok := known[name]; ok {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	names = slices.Compact(names)
	config := &common.OpenAPIV3Config{
		Info:              &spec.Info{InfoProps: spec.InfoProps{Title: "Kubernetes", Version: "unversioned"}},
		Definitions:       known,
		GetDefinitionName: namer.GetDefinitionName,
	}
	models, err := builder3.BuildOpenAPIDefinitionsForResources(config, names...)
	if err != nil {
		return nil, fmt.Errorf("fieldmanager: building the built-in kinds' models: %w", err)
	}
	return models, nil
}

// BuiltinTypeConverter is the type converter of the built-in kinds, as
// kube-apiserver makes it from its models.
func BuiltinTypeConverter(models map[string]*spec.Schema) (managedfields.TypeConverter, error) {
	tc, err := managedfields.NewTypeConverter(models, false)
	if err != nil {
		return nil, fmt.Errorf("fieldmanager: the built-in kinds' type converter: %w", err)
	}
	return tc, nil
}

// CRDTypeConverter is the type converter of a CRD's custom resources, as
// apiextensions-apiserver builds it: every version's OpenAPI v3 schema
// (x-kubernetes-list-type, -list-map-keys, -map-type and
// -preserve-unknown-fields become structured-merge-diff's list and map
// semantics), merged with the built-in models their references name
// (ObjectMeta). A CRD without schemas gets the deduced converter, which
// treats every list as atomic.
func CRDTypeConverter(crd *apiextensionsv1.CustomResourceDefinition, static map[string]*spec.Schema) (managedfields.TypeConverter, error) {
	specs := []*spec3.OpenAPI{{Version: "3.0.0", Components: &spec3.Components{Schemas: static}}}
	for _, v := range crd.Spec.Versions {
		s, err := builder.BuildOpenAPIV3(crd, v.Name, builder.Options{})
		if err != nil {
			return nil, fmt.Errorf("fieldmanager: CRD %s version %s: %w", crd.Name, v.Name, err)
		}
		specs = append(specs, s)
	}
	merged, err := builder.MergeSpecsV3(specs...)
	if err != nil {
		return nil, fmt.Errorf("fieldmanager: CRD %s: merging version schemas: %w", crd.Name, err)
	}
	if len(merged.Components.Schemas) == 0 {
		return managedfields.NewDeducedTypeConverter(), nil
	}
	tc, err := managedfields.NewTypeConverter(merged.Components.Schemas, crd.Spec.PreserveUnknownFields)
	if err != nil {
		return nil, fmt.Errorf("fieldmanager: CRD %s: type converter: %w", crd.Name, err)
	}
	return tc, nil
}
