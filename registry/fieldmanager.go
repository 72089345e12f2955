package registry

import (
	"fmt"
	"sync"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/kube-openapi/pkg/validation/spec"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/stratadev/strata/fieldmanager"
)

// builtinModels and builtinTypes are built once, on first use, from the
// generated OpenAPI definitions (a few hundred milliseconds).
var (
	builtinModels = sync.OnceValues(func() (map[string]*spec.Schema, error) {
		return fieldmanager.BuiltinModels(OpenAPIDefinitions, Scheme)
	})
	builtinTypes = sync.OnceValues(func() (managedfields.TypeConverter, error) {
		models, err := builtinModels()
		if err != nil {
			return nil, err
		}
		return fieldmanager.BuiltinTypeConverter(models)
	})
)

// WarmFieldManagers builds the built-in kinds' type models, so that the
// first write does not wait for them.
func WarmFieldManagers() error {
	_, err := builtinTypes()
	return err
}

// fieldManagers are a kind's field managers by subresource, each built on
// first use; every write reads them, without a lock.
type fieldManagers struct {
	bySubresource sync.Map // string → *fieldmanager.Manager
}

// FieldManager is the kind's field manager for subresource ("" for the
// resource itself, "status", "scale"), as kube-apiserver installs it: the
// kind's type model, conversions through the hub version, and the fields
// the subresource's strategy resets left unowned.
func (k *Kind) FieldManager(subresource string) (*fieldmanager.Manager, error) {
	if k.fields == nil {
		return nil, fmt.Errorf("registry: %s has no field managers (not built by Builtin or CustomKinds)", k.GVK)
	}
	if m, ok := k.fields.bySubresource.Load(subresource); ok {
		return m.(*fieldmanager.Manager), nil
	}
	c, err := k.fieldManagerConfig(subresource)
	if err != nil {
		return nil, err
	}
	m, err := fieldmanager.New(c)
	if err != nil {
		return nil, err
	}
	// Two first writes may both build one; they keep the same.
	kept, _ := k.fields.bySubresource.LoadOrStore(subresource, m)
	return kept.(*fieldmanager.Manager), nil
}

func (k *Kind) fieldManagerConfig(subresource string) (fieldmanager.Config, error) {
	c := fieldmanager.Config{Kind: k.GVK, Subresource: subresource, ResetFields: k.resetFieldsOf(subresource)}
	if k.custom == nil {
		tc, err := builtinTypes()
		if err != nil {
			return c, err
		}
		c.TypeConverter, c.Converter, c.Defaulter, c.Creater = tc, Scheme, Scheme, Scheme
		c.Hub = schema.GroupVersion{Group: k.GVK.Group, Version: runtime.APIVersionInternal}
		return c, nil
	}
	tc, err := k.custom.types()
	if err != nil {
		return c, err
	}
	c.TypeConverter, c.Converter, c.Custom = tc, k.custom.converter, true
	c.Defaulter, c.Creater = customDefaulter{k}, unstructuredCreator{}
	c.Hub = schema.GroupVersion{Group: k.GVK.Group, Version: k.custom.storageVersion}
	return c, nil
}

// resetFields are the fields a strategy resets, as kube-apiserver's
// installer reads them.
func resetFields(strategy any) map[fieldpath.APIVersion]fieldpath.Filter {
	switch s := strategy.(type) {
	case rest.ResetFieldsStrategy:
		return fieldpath.NewExcludeFilterSetMap(s.GetResetFields())
	case rest.ResetFieldsFilterStrategy:
		return s.GetResetFieldsFilter()
	}
	return nil
}

// crdFieldTypes is what the kinds of one CRD share for server-side apply:
// its type converter (built on first use) and its version converter.
type crdFieldTypes struct {
	types     func() (managedfields.TypeConverter, error)
	converter runtime.ObjectConvertor
}

// newCRDFieldTypes prepares the server-side apply types of a CRD, as
// apiextensions-apiserver does for each CRD it serves; converter is the
// CRD's version converter (crconvert.go).
func newCRDFieldTypes(crd *apiextensionsv1.CustomResourceDefinition, converter runtime.ObjectConvertor) crdFieldTypes {
	types := sync.OnceValues(func() (managedfields.TypeConverter, error) {
		models, err := builtinModels()
		if err != nil {
			return nil, err
		}
		return fieldmanager.CRDTypeConverter(crd, models)
	})
	return crdFieldTypes{types: types, converter: converter}
}

// unstructuredCreator makes the empty object a custom kind's create by
// apply starts from.
type unstructuredCreator struct{}

func (unstructuredCreator) New(gvk schema.GroupVersionKind) (runtime.Object, error) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	return u, nil
}

// customDefaulter applies a custom kind's structural defaults to an
// applied object, as apiextensions-apiserver's unstructuredDefaulter does.
type customDefaulter struct{ k *Kind }

func (d customDefaulter) Default(obj runtime.Object) {
	if u, ok := obj.(*unstructured.Unstructured); ok && d.k.custom.structural != nil {
		structuraldefaulting.Default(u.Object, d.k.custom.structural)
	}
}
