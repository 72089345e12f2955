package registry

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"sync"

	"k8s.io/apiextensions-apiserver/pkg/apihelpers"
	apiextensionsinternal "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	schemaobjectmeta "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/objectmeta"
	structuralpruning "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apiextensions-apiserver/pkg/crdserverscheme"
	"k8s.io/apiextensions-apiserver/pkg/registry/customresource"
	"k8s.io/apiextensions-apiserver/pkg/registry/customresource/tableconvertor"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/registry/rest"
	kjson "sigs.k8s.io/json"

	strataschema "github.com/stratadev/strata/schema"
	builtinschema "github.com/stratadev/strata/schema/builtin"
)

// custom is what a kind served for a CustomResourceDefinition adds: objects
// are unstructured throughout, decoded against the version's structural
// schema (unknown fields pruned, defaults applied), prepared and validated
// by apiextensions-apiserver's custom resource strategy, and printed with
// the CRD's additionalPrinterColumns.
type custom struct {
	// crd is the definition the kind was built from; raw is the stored
	// object, which also has the schemas' patch extensions
	// (crdextensions.go).
	crd *apiextensionsv1.CustomResourceDefinition
	raw map[string]any
	// structural is the version's structural schema with defaults pruned;
	// nil when the version has none.
	structural *structuralschema.Structural
	// storageVersion is the version objects are stored in.
	storageVersion string
	table          rest.TableConvertor
	// scale is the version's scale subresource; nil without one.
	scale *apiextensionsv1.CustomResourceSubresourceScale
	// webhook converts objects between versions when the CRD has the
	// Webhook conversion strategy (crconvert.go); nil for None.
	webhook *webhookConversion

	// crdFieldTypes are the CRD's server-side apply types, shared by its
	// versions.
	crdFieldTypes

	patchOnce   sync.Once
	patchSchema strataschema.Type
	patchErr    error
}

// CustomKinds returns the kinds an established CRD serves: one per served
// version, each with the CRD's accepted names, its schema, subresources
// and printer columns. Versions are converted as the CRD's conversion
// strategy says: None (only apiVersion changes) or Webhook, through conv
// (nil: converters with upstream's defaults).
//
// raw is the CRD as stored, for the patch extensions of its schemas that
// the typed crd cannot hold.
func CustomKinds(crd *apiextensionsv1.CustomResourceDefinition, raw map[string]any, conv *CRConverters) ([]*Kind, error) {
	internal := &apiextensionsinternal.CustomResourceDefinition{}
	if err := Scheme.Convert(crd, internal, nil); err != nil {
		return nil, fmt.Errorf("registry: CRD %s to internal: %w", crd.Name, err)
	}
	storageVersion, err := apihelpers.GetCRDStorageVersion(crd)
	if err != nil {
		return nil, fmt.Errorf("registry: CRD %s: %w", crd.Name, err)
	}
	names := crd.Status.AcceptedNames
	if names.Plural == "" {
		names = crd.Spec.Names
	}
	converter, err := conv.forCRD(crd)
	if err != nil {
		return nil, fmt.Errorf("registry: CRD %s: %w", crd.Name, err)
	}
	fieldTypes := newCRDFieldTypes(crd, converter.safe)
	schemas := versionSchemas(crd, internal)
	var kinds []*Kind
	for _, v := range crd.Spec.Versions {
		if !v.Served {
			continue
		}
		k, err := customKind(crd, raw, internal, v, names, storageVersion)
		if k != nil {
			k.custom.crdFieldTypes = fieldTypes
			k.custom.webhook = newWebhookConversion(crd, converter, k.GVK, storageVersion, schemas)
		}
		if err != nil {
			return nil, fmt.Errorf("registry: CRD %s version %s: %w", crd.Name, v.Name, err)
		}
		kinds = append(kinds, k)
	}
	return kinds, nil
}

func customKind(crd *apiextensionsv1.CustomResourceDefinition, raw map[string]any, internal *apiextensionsinternal.CustomResourceDefinition,
	v apiextensionsv1.CustomResourceDefinitionVersion, names apiextensionsv1.CustomResourceDefinitionNames, storageVersion string) (*Kind, error) {
	gvk := schema.GroupVersionKind{Group: crd.Spec.Group, Version: v.Name, Kind: names.Kind}
	namespaced := crd.Spec.Scope == apiextensionsv1.NamespaceScoped
	validation, err := apiextensionsinternal.GetSchemaForVersion(internal, v.Name)
	if err != nil {
		return nil, err
	}
	var props *apiextensionsinternal.JSONSchemaProps
	if validation != nil {
		props = validation.OpenAPIV3Schema
	}
	structural, err := structuralOf(props, crd.Spec.PreserveUnknownFields)
	if err != nil {
		return nil, err
	}
	validator, _, err := apiservervalidation.NewSchemaValidator(props)
	if err != nil {
		return nil, fmt.Errorf("schema validator: %w", err)
	}
	subresources, err := apiextensionsinternal.GetSubresourcesForVersion(internal, v.Name)
	if err != nil {
		return nil, err
	}
	var statusSpec *apiextensionsinternal.CustomResourceSubresourceStatus
	var scaleSpec *apiextensionsinternal.CustomResourceSubresourceScale
	var statusValidator apiservervalidation.SchemaValidator
	if subresources != nil {
		statusSpec, scaleSpec = subresources.Status, subresources.Scale
	}
	if statusSpec != nil && props != nil {
		if statusSchema, ok := props.Properties["status"]; ok {
			if statusValidator, _, err = apiservervalidation.NewSchemaValidator(&statusSchema); err != nil {
				return nil, fmt.Errorf("status schema validator: %w", err)
			}
		}
	}
	strategy := customresource.NewStrategy(crdserverscheme.NewUnstructuredObjectTyper(), namespaced, gvk, validator, statusValidator,
		structural, statusSpec, scaleSpec, v.SelectableFields)
	columns := v.AdditionalPrinterColumns
	if len(columns) == 0 {
		columns = []apiextensionsv1.CustomResourceColumnDefinition{{Name: "Age", Type: "date", JSONPath: ".metadata.creationTimestamp"}}
	}
	table, err := tableconvertor.New(columns)
	if err != nil {
		// kube-apiserver falls back to the default columns too.
		table = rest.NewDefaultTableConvertor(schema.GroupResource{Group: crd.Spec.Group, Resource: names.Plural})
	}
	k := &Kind{
		GVK: gvk, Resource: names.Plural, SingularName: names.Singular, Namespaced: namespaced,
		ShortNames: names.ShortNames, Categories: names.Categories,
		strategy: strategy, fields: &fieldManagers{},
		custom: &custom{crd: crd, raw: raw, structural: structural, storageVersion: storageVersion, table: table},
	}
	if k.SingularName == "" {
		k.SingularName = singular(names.Kind)
	}
	if statusSpec != nil {
		k.status = customresource.NewStatusStrategy(strategy)
	}
	if v.Subresources != nil && v.Subresources.Scale != nil {
		k.custom.scale = v.Subresources.Scale.DeepCopy()
	}
	return k, nil
}

// structuralOf is the structural schema of a version, with defaults
// pruned as kube-apiserver serves it.
func structuralOf(props *apiextensionsinternal.JSONSchemaProps, preserveUnknownFields bool) (*structuralschema.Structural, error) {
	if props == nil {
		return nil, nil
	}
	s, err := structuralschema.NewStructural(props)
	if err != nil {
		if preserveUnknownFields {
			return nil, nil
		}
		return nil, fmt.Errorf("structural schema: %w", err)
	}
	if preserveUnknownFields {
		return s, nil
	}
	s = s.DeepCopy()
	if err := structuraldefaulting.PruneDefaults(s); err != nil {
		return nil, fmt.Errorf("pruning schema defaults: %w", err)
	}
	return s, nil
}

// versionSchemas are the structural schemas of all of a CRD's versions,
// served or not (objects may be stored in any), by version name; a version
// whose schema is missing or not structural has none.
func versionSchemas(crd *apiextensionsv1.CustomResourceDefinition, internal *apiextensionsinternal.CustomResourceDefinition) map[string]*structuralschema.Structural {
	out := make(map[string]*structuralschema.Structural, len(crd.Spec.Versions))
	for _, v := range crd.Spec.Versions {
		validation, err := apiextensionsinternal.GetSchemaForVersion(internal, v.Name)
		if err != nil || validation == nil {
			continue
		}
		if s, err := structuralOf(validation.OpenAPIV3Schema, crd.Spec.PreserveUnknownFields); err == nil {
			out[v.Name] = s
		}
	}
	return out
}

// CRD returns the definition a custom kind was built from; nil for
// built-in kinds.
func (k *Kind) CRD() *apiextensionsv1.CustomResourceDefinition {
	if k.custom == nil {
		return nil
	}
	return k.custom.crd
}

// PatchSchema is the schema strategic merge patches of the kind follow:
// the struct tags of a built-in kind; for a custom kind the CRD's schema,
// whose x-kubernetes-list-type, x-kubernetes-list-map-keys and
// x-kubernetes-patch-* extensions say how lists merge. ok is false when
// there is none (lists are then replaced); err when the CRD's schema
// cannot be compiled.
func (k *Kind) PatchSchema() (t strataschema.Type, ok bool, err error) {
	if k.custom == nil {
		t, ok = builtinschema.ForGVK(k.GVK.Group, k.GVK.Version, k.GVK.Kind)
		return t, ok, nil
	}
	c := k.custom
	c.patchOnce.Do(func() {
		// The stored CRD, patch extensions included, is the document
		// strata's schema loader reads.
		data, err := json.Marshal(c.raw)
		if err != nil {
			c.patchErr = fmt.Errorf("CRD %s: %w", c.crd.Name, err)
			return
		}
		doc, err := strataschema.Load("customresourcedefinitions/"+c.crd.Name, data)
		if err != nil {
			c.patchErr = err
			return
		}
		if t, ok := doc.ForGVK(c.crd.Spec.Group, k.GVK.Version, c.crd.Spec.Names.Kind); ok && t != nil {
			c.patchSchema = customRoot{t}
		}
	})
	return c.patchSchema, c.patchSchema != nil, c.patchErr
}

// SchemaExtension is a kept patch extension of a custom kind's schema:
// Key and Value at Path below the version's openAPIV3Schema (property names
// after "properties", and "items", "additionalProperties").
type SchemaExtension struct {
	Path  []string
	Key   string
	Value any
}

// SchemaExtensions returns the kept patch extensions of the kind's schema.
func (k *Kind) SchemaExtensions() []SchemaExtension {
	if k.custom == nil {
		return nil
	}
	var out []SchemaExtension
	for _, e := range findSchemaExtensions(k.custom.raw) {
		// spec versions {i} schema openAPIV3Schema ... key
		i, _ := strconv.Atoi(e.path[2])
		if i >= len(k.custom.crd.Spec.Versions) || k.custom.crd.Spec.Versions[i].Name != k.GVK.Version {
			continue
		}
		n := len(e.path)
		out = append(out, SchemaExtension{Path: e.path[5 : n-1], Key: e.path[n-1], Value: e.value})
	}
	return out
}

// Scale is the kind's scale subresource (custom kinds only); nil when it
// has none.
func (k *Kind) Scale() *apiextensionsv1.CustomResourceSubresourceScale {
	if k.custom == nil {
		return nil
	}
	return k.custom.scale
}

// StorageVersion is the version objects of the kind are stored in.
func (k *Kind) StorageVersion() string {
	if k.custom == nil {
		return k.GVK.Version
	}
	return k.custom.storageVersion
}

// decodeCustom parses a custom resource body: strict JSON (duplicate fields
// are strict errors), its apiVersion and kind checked, metadata coerced,
// fields the schema does not know pruned and reported as kube-apiserver
// reports them (unknown field "spec.x"), and the schema's defaults applied.
func (k *Kind) decodeCustom(body []byte, fv FieldValidation) (runtime.Object, []string, error) {
	var content map[string]any
	strictErrs, err := kjson.UnmarshalStrict(body, &content)
	if err == nil && content == nil {
		err = fmt.Errorf("the body is not a JSON object")
	}
	actual := &k.GVK
	if err != nil || !k.ownTypeMeta(content) {
		// Only now read the body's apiVersion and kind on their own: a body
		// of another kind is refused as such, and errors name what the
		// body says it is, as kube-apiserver words them.
		var terr error
		if actual, terr = k.checkTypeMeta(body); terr != nil {
			return nil, nil, terr
		}
		if err != nil {
			return nil, nil, k.decodeError(actual, err, body)
		}
	}
	u := &unstructured.Unstructured{Object: content}
	u.SetGroupVersionKind(k.GVK)
	unknown, err := k.custom.coerce(u, fv != FieldValidationIgnore)
	if err != nil {
		return nil, nil, k.decodeError(actual, err, body)
	}
	var problems []string
	for _, e := range strictErrs {
		problems = append(problems, e.Error())
	}
	for _, path := range unknown {
		problems = append(problems, fmt.Sprintf("unknown field %q", path))
	}
	switch {
	case len(problems) == 0 || fv == FieldValidationIgnore:
		problems = nil
	case fv == FieldValidationStrict:
		errs := make([]error, len(problems))
		for i, p := range problems {
			errs[i] = fmt.Errorf("%s", p)
		}
		return nil, nil, k.decodeError(actual, runtime.NewStrictDecodingError(errs), body)
	}
	if k.custom.structural != nil {
		structuraldefaulting.Default(u.Object, k.custom.structural)
	}
	return u, problems, nil
}

// ownTypeMeta says whether a decoded body's apiVersion and kind, where
// present, are the kind's own.
func (k *Kind) ownTypeMeta(content map[string]any) bool {
	for field, want := range map[string]string{"apiVersion": k.GVK.GroupVersion().String(), "kind": k.GVK.Kind} {
		if v := content[field]; v != nil && v != "" && v != want {
			return false
		}
	}
	return true
}

// coerce is apiextensions-apiserver's schema coercion of a decoded object:
// metadata read as ObjectMeta (unknown metadata fields dropped), the rest
// pruned to the schema, non-nullable nulls removed, embedded resources'
// metadata coerced. It returns the paths of the fields it dropped when
// track is set.
func (c *custom) coerce(u *unstructured.Unstructured, track bool) ([]string, error) {
	return coerce(u, c.structural, c.crd.Spec.PreserveUnknownFields, track)
}

// coerce is custom.coerce by a given structural schema.
func coerce(u *unstructured.Unstructured, structural *structuralschema.Structural, preserveUnknownFields, track bool) ([]string, error) {
	apiVersion, kind := u.GetAPIVersion(), u.GetKind()
	objectMeta, foundMeta, unknown, err := schemaobjectmeta.GetObjectMetaWithOptions(u.Object,
		schemaobjectmeta.ObjectMetaOptions{ReturnUnknownFieldPaths: track})
	if err != nil {
		return nil, err
	}
	if !preserveUnknownFields { // the legacy field: nothing is pruned
		opts := structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: track}
		unknown = append(unknown, structuralpruning.PruneWithOptions(u.Object, structural, true, opts)...)
		structuraldefaulting.PruneNonNullableNullsWithoutDefaults(u.Object, structural)
	}
	ferr, paths := schemaobjectmeta.CoerceWithOptions(nil, u.Object, structural, false,
		schemaobjectmeta.CoerceOptions{ReturnUnknownFieldPaths: track})
	if ferr != nil {
		return nil, ferr
	}
	unknown = append(unknown, paths...)
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	if foundMeta {
		if err := schemaobjectmeta.SetObjectMeta(u.Object, objectMeta); err != nil {
			return nil, err
		}
	}
	return unknown, nil
}

// customTable renders custom resources with the CRD's printer columns.
func (k *Kind) customTable(ctx context.Context, objs []*unstructured.Unstructured, asList bool, opts *metav1.TableOptions) (*metav1.Table, error) {
	target, err := k.unstructuredTarget(objs, asList)
	if err != nil {
		return nil, err
	}
	return k.custom.table.ConvertToTable(ctx, target, opts)
}

// errProtobufCustom is kube-apiserver's answer to a protobuf body for a
// custom resource.
func (k *Kind) errProtobufCustom() error {
	err := apierrors.NewGenericServerResponse(http.StatusUnsupportedMediaType, "", k.GroupResource(), "", "", 0, false)
	err.ErrStatus.Message = fmt.Sprintf("the body of the request was in an unknown format - accepted media types include: %s, %s",
		runtime.ContentTypeJSON, runtime.ContentTypeYAML)
	return err
}
