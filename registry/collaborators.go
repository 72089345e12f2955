package registry

import (
	"context"
	"errors"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
)

// Upstream strategies that take collaborators (a namespace client, a
// resource resolver) get these stand-ins: strata's registry reads no
// objects and authorizes nothing.

// errNoNamespaceLookup is what resource claims' admin-access check gets
// when it looks up the claim's namespace.
var errNoNamespaceLookup = errors.New("strata does not look up namespaces for admin access to devices")

// noNamespaces is the namespace client upstream's resource claim
// strategies take. They use it only to read the claim's namespace when a
// request asks for admin access to devices, which strata refuses (an
// invalid field naming this error).
type noNamespaces struct {
	typedcorev1.NamespaceInterface
}

// Get refuses every lookup.
func (noNamespaces) Get(context.Context, string, metav1.GetOptions) (*corev1.Namespace, error) {
	return nil, errNoNamespaceLookup
}

// noResolver is the resource resolver of the admission policy binding
// strategies. They require one, but call it only to authorize a paramRef,
// which they skip without an authorizer.
type noResolver struct{}

// Resolve refuses every kind.
func (noResolver) Resolve(gvk schema.GroupVersionKind) (schema.GroupVersionResource, error) {
	return schema.GroupVersionResource{}, errors.New("strata does not resolve paramKind resources")
}
