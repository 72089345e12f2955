package apiserver

import (
	"context"
	"fmt"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
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

// setAuthorization hands the authorizer and the RBAC rule resolver to
// the kinds' escalation checks; without an authorizer nothing is checked.
func (s *Server) setAuthorization() {
	if s.cfg.Authorizer == nil {
		return
	}
	rules := rbacvalidation.NewDefaultRuleResolver(storeRules{s}, storeRules{s}, storeRules{s}, storeRules{s})
	for _, r := range s.current().resources {
		r.kind.SetAuthorization(s.cfg.Authorizer, rules)
	}
}

// storeRules reads Roles, ClusterRoles and their bindings from the
// server's stores for the rule resolver.
type storeRules struct{ s *Server }

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
	return listOf[rbacv1.RoleBinding](ctx, r.s, roleBindingsGVR, namespace)
}

// ListClusterRoleBindings implements rbacvalidation.ClusterRoleBindingLister.
func (r storeRules) ListClusterRoleBindings(ctx context.Context) ([]*rbacv1.ClusterRoleBinding, error) {
	return listOf[rbacv1.ClusterRoleBinding](ctx, r.s, clusterRoleBindingsGVR, "")
}

func (r storeRules) get(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string, into any) error {
	res, ok := r.s.current().lookup(gvr)
	if !ok {
		return fmt.Errorf("apiserver: %s is not served", gvr.GroupResource())
	}
	u, err := res.store.Get(ctx, namespace, name, storage.GetOptions{})
	if err != nil {
		return err
	}
	return fromUnstructured(u, into)
}

func listOf[T any](ctx context.Context, s *Server, gvr schema.GroupVersionResource, namespace string) ([]*T, error) {
	res, ok := s.current().lookup(gvr)
	if !ok {
		return nil, fmt.Errorf("apiserver: %s is not served", gvr.GroupResource())
	}
	list, err := res.store.List(ctx, namespace, storage.ListOptions{})
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
		return fmt.Errorf("apiserver: %s %s/%s: %w", u.GetKind(), u.GetNamespace(), u.GetName(), err)
	}
	return nil
}
