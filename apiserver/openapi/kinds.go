package openapi

import (
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// extraObject stands in for an object of a kind the scheme does not know (a
// custom resource): the installer asks a runtime.ObjectCreater for samples of
// each kind, and the OpenAPI builders name a sample's definition by its
// OpenAPIModelName, so one Go type serves every extra kind.
type extraObject struct {
	metav1.TypeMeta
	modelName string
}

func (o *extraObject) DeepCopyObject() runtime.Object {
	c := *o
	return &c
}

// OpenAPIModelName has a value receiver: the installer hands the builders the
// dereferenced sample.
func (o extraObject) OpenAPIModelName() string { return o.modelName }

// kinds is the runtime.ObjectTyper and runtime.ObjectCreater the installer
// sees: the scheme, plus the extra kinds of the group-version being built.
type kinds struct {
	scheme *runtime.Scheme
	extra  map[schema.GroupVersionKind]string // kind → definition name
}

var (
	_ runtime.ObjectTyper   = kinds{}
	_ runtime.ObjectCreater = kinds{}
)

func (k kinds) ObjectKinds(obj runtime.Object) ([]schema.GroupVersionKind, bool, error) {
	if o, ok := obj.(*extraObject); ok {
		return []schema.GroupVersionKind{o.GroupVersionKind()}, false, nil
	}
	return k.scheme.ObjectKinds(obj)
}

func (k kinds) Recognizes(gvk schema.GroupVersionKind) bool {
	_, ok := k.extra[gvk]
	return ok || k.scheme.Recognizes(gvk)
}

func (k kinds) New(gvk schema.GroupVersionKind) (runtime.Object, error) {
	if name, ok := k.extra[gvk]; ok {
		o := &extraObject{modelName: name}
		o.SetGroupVersionKind(gvk)
		return o, nil
	}
	obj, err := k.scheme.New(gvk)
	if err != nil && gvk.Kind == "WatchEvent" {
		// The installer asks for the WatchEvent of the group-version it
		// installs; a group-version of extra kinds is not in the scheme.
		return &metav1.WatchEvent{}, nil
	}
	return obj, err
}

// modelName is the definition name kube-apiserver gives a custom resource
// kind: the group reversed, then version and kind ("com.example.v1.Widget"),
// as in k8s.io/apiextensions-apiserver/pkg/controller/openapi/builder.
func modelName(gvk schema.GroupVersionKind) string {
	parts := strings.Split(gvk.Group, ".")
	slices.Reverse(parts)
	return fmt.Sprintf("%s.%s.%s", strings.Join(parts, "."), gvk.Version, gvk.Kind)
}

// gvkExtension is the x-kubernetes-group-version-kind value of a definition,
// in the form k8s.io/apiserver's DefinitionNamer produces.
func gvkExtension(gvks ...schema.GroupVersionKind) []interface{} {
	out := make([]interface{}, 0, len(gvks))
	for _, gvk := range gvks {
		out = append(out, map[string]interface{}{"group": gvk.Group, "version": gvk.Version, "kind": gvk.Kind})
	}
	return out
}
