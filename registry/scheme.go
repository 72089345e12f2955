package registry

import (
	"fmt"

	apiextensionsinstall "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/install"
	apiregistrationinstall "k8s.io/kube-aggregator/pkg/apis/apiregistration/install"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kubernetes/pkg/api/legacyscheme"

	// The install packages register each group's external and internal
	// types, conversions and defaulting functions in legacyscheme.
	_ "k8s.io/kubernetes/pkg/apis/admissionregistration/install"
	_ "k8s.io/kubernetes/pkg/apis/apps/install"
	_ "k8s.io/kubernetes/pkg/apis/authentication/install"
	_ "k8s.io/kubernetes/pkg/apis/authorization/install"
	_ "k8s.io/kubernetes/pkg/apis/autoscaling/install"
	_ "k8s.io/kubernetes/pkg/apis/batch/install"
	_ "k8s.io/kubernetes/pkg/apis/certificates/install"
	_ "k8s.io/kubernetes/pkg/apis/coordination/install"
	_ "k8s.io/kubernetes/pkg/apis/core/install"
	_ "k8s.io/kubernetes/pkg/apis/discovery/install"
	_ "k8s.io/kubernetes/pkg/apis/events/install"
	_ "k8s.io/kubernetes/pkg/apis/flowcontrol/install"
	_ "k8s.io/kubernetes/pkg/apis/networking/install"
	_ "k8s.io/kubernetes/pkg/apis/node/install"
	_ "k8s.io/kubernetes/pkg/apis/policy/install"
	_ "k8s.io/kubernetes/pkg/apis/rbac/install"
	_ "k8s.io/kubernetes/pkg/apis/resource/install"
	_ "k8s.io/kubernetes/pkg/apis/scheduling/install"
	_ "k8s.io/kubernetes/pkg/apis/storage/install"
	_ "k8s.io/kubernetes/pkg/apis/storagemigration/install"
)

// Scheme holds the built-in types, their conversions and defaults: the
// scheme kube-apiserver itself uses.
var Scheme = legacyscheme.Scheme

// CustomResourceDefinitions and APIServices are served too; kube-apiserver's
// apiextensions and aggregator servers register them in schemes of their own.
func init() {
	apiextensionsinstall.Install(Scheme)
	apiregistrationinstall.Install(Scheme)
}

// toTyped converts an unstructured object into its external typed form.
func toTyped(u *unstructured.Unstructured, gvk schema.GroupVersionKind) (runtime.Object, error) {
	obj, err := Scheme.New(gvk)
	if err != nil {
		return nil, fmt.Errorf("registry: new %s: %w", gvk, err)
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, obj); err != nil {
		return nil, fmt.Errorf("registry: converting stored %s %q: %w", gvk.Kind, u.GetName(), err)
	}
	return obj, nil
}

// toInternal converts an external typed object to the internal version the
// strategies and validation work on.
func toInternal(obj runtime.Object, gvk schema.GroupVersionKind) (runtime.Object, error) {
	internal, err := Scheme.New(gvk.GroupKind().WithVersion(runtime.APIVersionInternal))
	if err != nil {
		return nil, fmt.Errorf("registry: new internal %s: %w", gvk.Kind, err)
	}
	if err := Scheme.Convert(obj, internal, nil); err != nil {
		return nil, fmt.Errorf("registry: converting %s to internal: %w", gvk.Kind, err)
	}
	return internal, nil
}

// toUnstructured converts an internal object back to the external version
// and then to the unstructured form storage keeps, with kind and apiVersion
// set.
func toUnstructured(internal runtime.Object, gvk schema.GroupVersionKind) (*unstructured.Unstructured, error) {
	u, _, err := toUnstructuredTyped(internal, gvk)
	return u, err
}

// toUnstructuredTyped is toUnstructured that also returns the external
// typed object it went through (which may share memory with internal).
func toUnstructuredTyped(internal runtime.Object, gvk schema.GroupVersionKind) (*unstructured.Unstructured, runtime.Object, error) {
	external, err := Scheme.New(gvk)
	if err != nil {
		return nil, nil, fmt.Errorf("registry: new %s: %w", gvk, err)
	}
	if err := Scheme.Convert(internal, external, nil); err != nil {
		return nil, nil, fmt.Errorf("registry: converting %s to %s: %w", gvk.Kind, gvk.Version, err)
	}
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(external)
	if err != nil {
		return nil, nil, fmt.Errorf("registry: %s to unstructured: %w", gvk.Kind, err)
	}
	u := &unstructured.Unstructured{Object: content}
	u.SetGroupVersionKind(gvk)
	external.GetObjectKind().SetGroupVersionKind(gvk)
	return u, external, nil
}
