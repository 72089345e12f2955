package registry

import (
	"context"
	"errors"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/registry/rest"
	clusterrolepolicy "k8s.io/kubernetes/pkg/registry/rbac/clusterrole/policybased"
	clusterrolebindingpolicy "k8s.io/kubernetes/pkg/registry/rbac/clusterrolebinding/policybased"
	rolepolicy "k8s.io/kubernetes/pkg/registry/rbac/role/policybased"
	rolebindingpolicy "k8s.io/kubernetes/pkg/registry/rbac/rolebinding/policybased"
	rbacvalidation "k8s.io/kubernetes/pkg/registry/rbac/validation"
)

// The RBAC kinds refuse writes that would grant more than their author
// holds, as kube-apiserver's RBAC storages do: strata runs those storages
// (pkg/registry/rbac/{role,clusterrole,rolebinding,clusterrolebinding}/policybased)
// themselves, over a stand-in store that only hands the object back, so
// their checks and Forbidden messages are upstream's. A Role or
// ClusterRole passes when its author is in system:masters, may
// "escalate" it, or holds every rule it grants (and, for an aggregation
// rule, everything); a binding when its author is in system:masters, may
// "bind" the role it names, or holds every rule of that role.

// policyStorage is what the policy-based storages answer: create and
// update, which they check before passing on.
type policyStorage interface {
	Create(ctx context.Context, obj runtime.Object, createValidation rest.ValidateObjectFunc, options *metav1.CreateOptions) (runtime.Object, error)
	Update(ctx context.Context, name string, objInfo rest.UpdatedObjectInfo, createValidation rest.ValidateObjectFunc,
		updateValidation rest.ValidateObjectUpdateFunc, forceAllowCreate bool, options *metav1.UpdateOptions) (runtime.Object, bool, error)
}

// escalationCheck builds a kind's policy-based storage over a store.
type escalationCheck func(rest.StandardStorage, authorizer.UnconditionalAuthorizer, rbacvalidation.AuthorizationRuleResolver) policyStorage

// The four RBAC kinds' checks (their rows in builtin).
var (
	roleEscalation = func(s rest.StandardStorage, a authorizer.UnconditionalAuthorizer, r rbacvalidation.AuthorizationRuleResolver) policyStorage {
		return rolepolicy.NewStorage(s, a, r)
	}
	clusterRoleEscalation = func(s rest.StandardStorage, a authorizer.UnconditionalAuthorizer, r rbacvalidation.AuthorizationRuleResolver) policyStorage {
		return clusterrolepolicy.NewStorage(s, a, r)
	}
	roleBindingEscalation = func(s rest.StandardStorage, a authorizer.UnconditionalAuthorizer, r rbacvalidation.AuthorizationRuleResolver) policyStorage {
		return rolebindingpolicy.NewStorage(s, a, r)
	}
	clusterRoleBindingEscalation = func(s rest.StandardStorage, a authorizer.UnconditionalAuthorizer, r rbacvalidation.AuthorizationRuleResolver) policyStorage {
		return clusterrolebindingpolicy.NewStorage(s, a, r)
	}
)

// SetAuthorization makes the kind's creates and updates (every patch and
// apply is one) refuse escalation, asking a (the server's authorizer, for
// the "escalate" and "bind" verbs) and rules (the RBAC rules of users and
// roles, read from the server's own stores as kube-apiserver's RBAC
// storages read theirs). Kinds without escalation checks ignore it.
func (k *Kind) SetAuthorization(a authorizer.UnconditionalAuthorizer, rules rbacvalidation.AuthorizationRuleResolver) {
	if k.escalation != nil {
		k.guard = k.escalation(handBack{}, a, rules)
	}
}

// checkCreate runs the kind's escalation check, if any, on an object
// about to be created (internal, before the strategy: the namespace comes
// from ctx, as upstream's storage reads it).
func (k *Kind) checkCreate(ctx context.Context, obj runtime.Object) error {
	if k.guard == nil {
		return nil
	}
	_, err := k.guard.Create(ctx, obj, nil, &metav1.CreateOptions{})
	return err
}

// checkUpdate runs the kind's escalation check, if any, on an update of
// old to obj (internal objects, before the strategy).
func (k *Kind) checkUpdate(ctx context.Context, obj, old runtime.Object) error {
	if k.guard == nil {
		return nil
	}
	m, ok := obj.(metav1.Object)
	if !ok {
		return errNoMetadata
	}
	ctx = context.WithValue(ctx, oldObjectKey{}, old)
	_, _, err := k.guard.Update(ctx, m.GetName(), rest.DefaultUpdatedObjectInfo(obj), nil, nil, false, &metav1.UpdateOptions{})
	return err
}

var errNoMetadata = errors.New("registry: the object has no metadata")

type oldObjectKey struct{}

// handBack is the store under the policy-based storages: a create returns
// the object as checked, an update the updated object computed from the
// old one in the context (which runs the storage's check).
type handBack struct{ rest.StandardStorage }

// Create implements rest.Creater.
func (handBack) Create(_ context.Context, obj runtime.Object, _ rest.ValidateObjectFunc, _ *metav1.CreateOptions) (runtime.Object, error) {
	return obj, nil
}

// Update implements rest.Updater.
func (handBack) Update(ctx context.Context, _ string, objInfo rest.UpdatedObjectInfo, _ rest.ValidateObjectFunc,
	_ rest.ValidateObjectUpdateFunc, _ bool, _ *metav1.UpdateOptions) (runtime.Object, bool, error) {
	old, _ := ctx.Value(oldObjectKey{}).(runtime.Object)
	obj, err := objInfo.UpdatedObject(ctx, old)
	return obj, false, err
}
