package authz

import (
	"sync"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	rbacinformers "k8s.io/client-go/informers/rbac"
	rbacv1informers "k8s.io/client-go/informers/rbac/v1"
	rbacv1listers "k8s.io/client-go/listers/rbac/v1"
	"k8s.io/client-go/tools/cache"
)

// kube-apiserver's RBAC authorizer lists the request's namespace's
// RoleBindings, and every ClusterRoleBinding, on every request: the
// lister copies each out of the informer's index (with 1,000 bindings in
// a namespace, most of the cost of authorizing a get). The authorizer
// strata builds reads them through bindingsFactory instead, whose binding
// listers keep the lists they return until a binding changes: the same
// bindings, so the same decisions. Lists are read-only to the authorizer
// (it iterates them), so one list is shared between requests.

// bindingsFactory is an informer factory whose RBAC binding listers keep
// their lists; everything else is the factory it wraps.
type bindingsFactory struct {
	informers.SharedInformerFactory
	rbac rbacGroup
}

func newBindingsFactory(f informers.SharedInformerFactory) (*bindingsFactory, error) {
	v1 := f.Rbac().V1()
	rb, crb := v1.RoleBindings(), v1.ClusterRoleBindings()
	rbCache, crbCache := &listCache[rbacv1.RoleBinding]{}, &listCache[rbacv1.ClusterRoleBinding]{}
	for inf, c := range map[cache.SharedIndexInformer]interface{ invalidate() }{rb.Informer(): rbCache, crb.Informer(): crbCache} {
		if _, err := inf.AddEventHandler(invalidateOnChange(c.invalidate)); err != nil {
			return nil, err
		}
	}
	return &bindingsFactory{SharedInformerFactory: f, rbac: rbacGroup{Interface: f.Rbac(), v1: rbacV1{Interface: v1,
		roleBindings:        roleBindingInformer{TypedRoleBindingInformer: rb, lister: roleBindingLister{rb.Lister(), rbCache}},
		clusterRoleBindings: clusterRoleBindingInformer{TypedClusterRoleBindingInformer: crb, lister: clusterRoleBindingLister{crb.Lister(), crbCache}},
	}}}, nil
}

// Rbac implements informers.SharedInformerFactory.
func (f *bindingsFactory) Rbac() rbacinformers.Interface { return f.rbac }

type rbacGroup struct {
	rbacinformers.Interface
	v1 rbacV1
}

func (g rbacGroup) V1() rbacv1informers.Interface { return g.v1 }

type rbacV1 struct {
	rbacv1informers.Interface
	roleBindings        roleBindingInformer
	clusterRoleBindings clusterRoleBindingInformer
}

func (v rbacV1) RoleBindings() rbacv1informers.TypedRoleBindingInformer { return v.roleBindings }
func (v rbacV1) ClusterRoleBindings() rbacv1informers.TypedClusterRoleBindingInformer {
	return v.clusterRoleBindings
}

type roleBindingInformer struct {
	rbacv1informers.TypedRoleBindingInformer
	lister roleBindingLister
}

func (i roleBindingInformer) Lister() rbacv1listers.RoleBindingLister { return i.lister }

type clusterRoleBindingInformer struct {
	rbacv1informers.TypedClusterRoleBindingInformer
	lister clusterRoleBindingLister
}

func (i clusterRoleBindingInformer) Lister() rbacv1listers.ClusterRoleBindingLister { return i.lister }

// roleBindingLister keeps each namespace's list of everything.
type roleBindingLister struct {
	rbacv1listers.RoleBindingLister
	cache *listCache[rbacv1.RoleBinding]
}

func (l roleBindingLister) RoleBindings(namespace string) rbacv1listers.RoleBindingNamespaceLister {
	return roleBindingNamespaceLister{l.RoleBindingLister.RoleBindings(namespace), namespace, l.cache}
}

type roleBindingNamespaceLister struct {
	rbacv1listers.RoleBindingNamespaceLister
	namespace string
	cache     *listCache[rbacv1.RoleBinding]
}

func (l roleBindingNamespaceLister) List(selector labels.Selector) ([]*rbacv1.RoleBinding, error) {
	if !selector.Empty() {
		return l.RoleBindingNamespaceLister.List(selector)
	}
	return l.cache.get(l.namespace, func() ([]*rbacv1.RoleBinding, error) {
		return l.RoleBindingNamespaceLister.List(selector)
	})
}

// clusterRoleBindingLister keeps the list of everything.
type clusterRoleBindingLister struct {
	rbacv1listers.ClusterRoleBindingLister
	cache *listCache[rbacv1.ClusterRoleBinding]
}

func (l clusterRoleBindingLister) List(selector labels.Selector) ([]*rbacv1.ClusterRoleBinding, error) {
	if !selector.Empty() {
		return l.ClusterRoleBindingLister.List(selector)
	}
	return l.cache.get("", func() ([]*rbacv1.ClusterRoleBinding, error) {
		return l.ClusterRoleBindingLister.List(selector)
	})
}

// listCache keeps lists by namespace until invalidated. A list loaded
// while a change arrives is not kept: the informer updates its index
// before it tells the handlers, so a load that began before the
// invalidation may have read the old index.
type listCache[T any] struct {
	mu    sync.Mutex
	gen   uint64
	lists map[string][]*T
}

func (c *listCache[T]) get(namespace string, load func() ([]*T, error)) ([]*T, error) {
	c.mu.Lock()
	if l, ok := c.lists[namespace]; ok {
		c.mu.Unlock()
		return l, nil
	}
	gen := c.gen
	c.mu.Unlock()
	l, err := load()
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if c.gen == gen {
		if c.lists == nil {
			c.lists = map[string][]*T{}
		}
		c.lists[namespace] = l
	}
	c.mu.Unlock()
	return l, nil
}

// invalidate drops every list: bindings change seldom.
func (c *listCache[T]) invalidate() {
	c.mu.Lock()
	c.gen++
	c.lists = nil
	c.mu.Unlock()
}

func invalidateOnChange(invalidate func()) cache.ResourceEventHandler {
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { invalidate() },
		UpdateFunc: func(any, any) { invalidate() },
		DeleteFunc: func(any) { invalidate() },
	}
}
