package registry

import (
	"context"
	"fmt"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	rbacvalidation "k8s.io/kubernetes/pkg/registry/rbac/validation"

	"github.com/stratadev/strata/storage"
)

// The RBAC kinds' escalation checks (registry's SetAuthorization) need
// the rules of the author and of the role a binding names. kube-apiserver
// reads them through its own RBAC storages (pkg/registry/rbac/rest:
// gets read etcd, lists the watch cache at its current revision), not the
// authorizer's informers; strata reads its stores the same way, so a
// binding of a missing role is the store's 404 (`clusterroles.rbac.authorization.k8s.io
// "x" not found`), as on kube-apiserver.

var (
	rolesGVR               = rbacv1.SchemeGroupVersion.WithResource("roles")
	roleBindingsGVR        = rbacv1.SchemeGroupVersion.WithResource("rolebindings")
	clusterRolesGVR        = rbacv1.SchemeGroupVersion.WithResource("clusterroles")
	clusterRoleBindingsGVR = rbacv1.SchemeGroupVersion.WithResource("clusterrolebindings")
)

// SetAuthorization hands the authorizer a and the RBAC rule resolver, which
// reads the stores lookup finds, to the kinds' escalation checks; without
// an authorizer nothing is checked.
func SetAuthorization(kinds []*Kind, a authorizer.UnconditionalAuthorizer, lookup func(schema.GroupVersionResource) (*Store, bool)) {
	if a == nil {
		return
	}
	r := storeRules{lookup}
	rules := rbacvalidation.NewDefaultRuleResolver(r, r, r, r)
	for _, k := range kinds {
		k.SetAuthorization(a, rules)
	}
}

// storeRules reads Roles, ClusterRoles and their bindings from the
// server's stores for the rule resolver.
type storeRules struct {
	lookup func(schema.GroupVersionResource) (*Store, bool)
}

// GetRole implements rbacvalidation.RoleGetter.
func (r storeRules) GetRole(ctx context.Context, namespace, name string) (*rbacv1.Role, error) {
	out := &rbacv1.Role{}
	return out, r.get(ctx, rolesGVR, namespace, name, out)
}

// GetClusterRole implements rbacvalidation.ClusterRoleGetter.
func (r storeRules) GetClusterRole(ctx context.Context, name string) (*rbacv1.ClusterRole, error) {
	out := &rbacv1.ClusterRole{}
	return out, r.get(ctx, clusterRolesGVR, "", name, out)
}

// ListRoleBindings implements rbacvalidation.RoleBindingLister.
func (r storeRules) ListRoleBindings(ctx context.Context, namespace string) ([]*rbacv1.RoleBinding, error) {
	return listOf[rbacv1.RoleBinding](ctx, r.lookup, roleBindingsGVR, namespace)
}

// ListClusterRoleBindings implements rbacvalidation.ClusterRoleBindingLister.
func (r storeRules) ListClusterRoleBindings(ctx context.Context) ([]*rbacv1.ClusterRoleBinding, error) {
	return listOf[rbacv1.ClusterRoleBinding](ctx, r.lookup, clusterRoleBindingsGVR, "")
}

func (r storeRules) get(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string, into any) error {
	st, ok := r.lookup(gvr)
	if !ok {
		return fmt.Errorf("registry: %s is not served", gvr.GroupResource())
	}
	u, err := st.storage.Get(ctx, namespace, name, storage.GetOptions{})
	if err != nil {
		return err
	}
	return fromUnstructured(u, into)
}

func listOf[T any](ctx context.Context, lookup func(schema.GroupVersionResource) (*Store, bool), gvr schema.GroupVersionResource, namespace string) ([]*T, error) {
	st, ok := lookup(gvr)
	if !ok {
		return nil, fmt.Errorf("registry: %s is not served", gvr.GroupResource())
	}
	list, err := st.storage.List(ctx, namespace, storage.ListOptions{})
	if err != nil {
		return nil, err
	}
	out := make([]*T, 0, len(list.Items))
	for i := range list.Items {
		item := new(T)
		if err := fromUnstructured(&list.Items[i], item); err != nil {
			return nil, err
		}
		out = append(out, item)
	}
	return out, nil
}

func fromUnstructured(u *unstructured.Unstructured, into any) error {
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, into); err != nil {
		return fmt.Errorf("registry: %s %s/%s: %w", u.GetKind(), u.GetNamespace(), u.GetName(), err)
	}
	return nil
}
