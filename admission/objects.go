package admission

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured/unstructuredscheme"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"

	"github.com/stratadev/strata/registry"
)

// builtinObjects converts built-in objects with kube-apiserver's scheme
// (webhooks and policies see the version they ask for) and knows each
// built-in resource's kind, as kube-apiserver's handlers register them.
func builtinObjects(kinds []*registry.Kind) admission.ObjectInterfaces {
	equivalents := runtime.NewEquivalentResourceRegistry()
	for _, k := range kinds {
		gvr := k.GVK.GroupVersion().WithResource(k.Resource)
		equivalents.RegisterKindFor(gvr, "", k.GVK)
		for _, sub := range k.Subresources() {
			if sub == "scale" {
				// strata's scale writes go through the object itself.
				continue
			}
			equivalents.RegisterKindFor(gvr, sub, k.GVK)
		}
	}
	s := registry.Scheme
	return &admission.RuntimeObjectInterfaces{ObjectCreater: s, ObjectTyper: s, ObjectDefaulter: s,
		ObjectConvertor: s, EquivalentResourceMapper: equivalents}
}

// customObjects handles custom resources as unstructured objects. A
// version other than the request's is the same object under another
// apiVersion (a CRD's conversion strategy None).
func customObjects() admission.ObjectInterfaces {
	return &admission.RuntimeObjectInterfaces{
		ObjectCreater:            unstructuredscheme.NewUnstructuredCreator(),
		ObjectTyper:              unstructuredscheme.NewUnstructuredObjectTyper(),
		ObjectDefaulter:          noDefaults{},
		ObjectConvertor:          apiVersionConvertor{},
		EquivalentResourceMapper: runtime.NewEquivalentResourceRegistry(),
	}
}

type noDefaults struct{}

func (noDefaults) Default(runtime.Object) {}

// apiVersionConvertor converts unstructured objects by their apiVersion.
type apiVersionConvertor struct{}

func (apiVersionConvertor) Convert(in, out, _ any) error {
	u, ok := in.(*unstructured.Unstructured)
	o, ok2 := out.(*unstructured.Unstructured)
	if !ok || !ok2 {
		return fmt.Errorf("admission: converting %T to %T: unstructured objects only", in, out)
	}
	apiVersion := o.GetAPIVersion()
	u.DeepCopyInto(o)
	if apiVersion != "" {
		o.SetAPIVersion(apiVersion)
	}
	return nil
}

func (apiVersionConvertor) ConvertToVersion(in runtime.Object, gv runtime.GroupVersioner) (runtime.Object, error) {
	u, ok := in.(*unstructured.Unstructured)
	if !ok {
		return nil, fmt.Errorf("admission: converting %T: unstructured objects only", in)
	}
	target, ok := gv.KindForGroupVersionKinds([]schema.GroupVersionKind{u.GroupVersionKind()})
	if !ok {
		return nil, fmt.Errorf("admission: %s cannot be converted to %v", u.GroupVersionKind(), gv)
	}
	out := u.DeepCopy()
	out.SetGroupVersionKind(target)
	return out, nil
}

func (apiVersionConvertor) ConvertFieldLabel(_ schema.GroupVersionKind, label, value string) (string, string, error) {
	return label, value, nil
}
