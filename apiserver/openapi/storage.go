package openapi

import (
	"context"
	"errors"

	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/apiserver/pkg/registry/rest"
)

// The types in this file are rest.Storage values that exist only to be handed
// to k8s.io/apiserver's route installer, which decides from the interfaces a
// storage implements which routes (and so which OpenAPI operations) a resource
// gets. The routes are turned into documents and never served, so no method
// here is ever called with a request; they all fail with errNotServed.

var errNotServed = errors.New("openapi: documentation-only storage does not serve requests")

// kindStorage is what every documentation storage knows: the kind it
// returns, its scope and its singular name.
type kindStorage struct {
	gvk        schema.GroupVersionKind
	newObject  func() runtime.Object
	namespaced bool
	singular   string
}

var (
	_ rest.Storage                  = (*kindStorage)(nil)
	_ rest.Scoper                   = (*kindStorage)(nil)
	_ rest.SingularNameProvider     = (*kindStorage)(nil)
	_ rest.GroupVersionKindProvider = (*kindStorage)(nil)
)

func (s *kindStorage) New() runtime.Object     { return s.newObject() }
func (s *kindStorage) Destroy()                {}
func (s *kindStorage) NamespaceScoped() bool   { return s.namespaced }
func (s *kindStorage) GetSingularName() string { return s.singular }

// GroupVersionKind tells the installer the exact kind, so it does not have to
// guess it from the Go type (several kinds may share one, as extra kinds do).
func (s *kindStorage) GroupVersionKind(schema.GroupVersion) schema.GroupVersionKind { return s.gvk }

// resourceStorage documents a top-level resource with every verb; the routes
// of verbs the resource does not serve are dropped afterwards (see
// filteredRoutes), which is simpler than one Go type per verb combination.
type resourceStorage struct {
	kindStorage
	newList             func() runtime.Object
	deleteReturnsObject bool
}

var (
	_ rest.StandardStorage            = (*resourceStorage)(nil)
	_ rest.MayReturnFullObjectDeleter = (*resourceStorage)(nil)
)

func (s *resourceStorage) NewList() runtime.Object { return s.newList() }

func (s *resourceStorage) DeleteReturnsDeletedObject() bool { return s.deleteReturnsObject }

func (s *resourceStorage) Get(context.Context, string, *metav1.GetOptions) (runtime.Object, error) {
	return nil, errNotServed
}

func (s *resourceStorage) List(context.Context, *metainternalversion.ListOptions) (runtime.Object, error) {
	return nil, errNotServed
}

func (s *resourceStorage) ConvertToTable(context.Context, runtime.Object, runtime.Object) (*metav1.Table, error) {
	return nil, errNotServed
}

func (s *resourceStorage) Watch(context.Context, *metainternalversion.ListOptions) (watch.Interface, error) {
	return nil, errNotServed
}

func (s *resourceStorage) Create(context.Context, runtime.Object, rest.ValidateObjectFunc, *metav1.CreateOptions) (runtime.Object, error) {
	return nil, errNotServed
}

func (s *resourceStorage) Update(context.Context, string, rest.UpdatedObjectInfo, rest.ValidateObjectFunc, rest.ValidateObjectUpdateFunc, bool, *metav1.UpdateOptions) (runtime.Object, bool, error) {
	return nil, false, errNotServed
}

func (s *resourceStorage) Delete(context.Context, string, rest.ValidateObjectFunc, *metav1.DeleteOptions) (runtime.Object, bool, error) {
	return nil, false, errNotServed
}

func (s *resourceStorage) DeleteCollection(context.Context, rest.ValidateObjectFunc, *metav1.DeleteOptions, *metainternalversion.ListOptions) (runtime.Object, error) {
	return nil, errNotServed
}

// subresourceStorage documents a get/update/patch subresource such as status
// or scale.
type subresourceStorage struct {
	kindStorage
}

var _ rest.Patcher = (*subresourceStorage)(nil)

func (s *subresourceStorage) Get(context.Context, string, *metav1.GetOptions) (runtime.Object, error) {
	return nil, errNotServed
}

func (s *subresourceStorage) Update(context.Context, string, rest.UpdatedObjectInfo, rest.ValidateObjectFunc, rest.ValidateObjectUpdateFunc, bool, *metav1.UpdateOptions) (runtime.Object, bool, error) {
	return nil, false, errNotServed
}

// createStorage documents a resource that is only created, such as the
// authorization.k8s.io reviews: kube-apiserver's REST of those implements
// rest.Creater alone, so the installer gives it one POST route.
type createStorage struct {
	kindStorage
}

var _ rest.Creater = (*createStorage)(nil)

func (s *createStorage) Create(context.Context, runtime.Object, rest.ValidateObjectFunc, *metav1.CreateOptions) (runtime.Object, error) {
	return nil, errNotServed
}
