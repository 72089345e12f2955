package controllers

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/kubernetes/pkg/controller/clusterroleaggregation"
	rbacrest "k8s.io/kubernetes/pkg/registry/rbac/rest"
	"k8s.io/kubernetes/plugin/pkg/auth/authorizer/rbac/bootstrappolicy"
)

// RBACBootstrapCheck is the name of the /readyz check of the bootstrap
// policy, kube-apiserver's post-start hook's.
const RBACBootstrapCheck = "poststarthook/" + rbacrest.PostStartHookName

// aggregationWorkers: kube-controller-manager runs the aggregation
// controller with five.
const aggregationWorkers = 5

// RBAC keeps kube-apiserver's bootstrap policy in place (the cluster
// roles and bindings it creates and reconciles at start: cluster-admin,
// system:discovery, system:basic-user, system:public-info-viewer, the
// aggregated admin, edit and view, the controllers' roles, and the roles
// and bindings of kube-system and kube-public). The rules of the
// aggregated roles are filled by the aggregation controller
// (startRoleAggregation), which runs with the other
// kube-controller-manager controllers.
type RBAC struct {
	loopback *rest.Config
	done     atomic.Bool
}

// NewRBAC prepares the bootstrap: loopback reaches the API as
// system:masters (the bootstrap builds its own client from it, as
// kube-apiserver's hook does).
func NewRBAC(loopback *rest.Config) *RBAC { return &RBAC{loopback: loopback} }

// startRoleAggregation runs kube-controller-manager's
// clusterrole-aggregation-controller, which keeps the rules of aggregated
// roles (admin, edit, view, ...) the union of the roles their selectors
// match, until ctx ends.
func startRoleAggregation(ctx context.Context, t *term) error {
	agg := clusterroleaggregation.NewClusterRoleAggregation(t.cfg.Informers.Rbac().V1().ClusterRoles(), t.cfg.Client.RbacV1())
	t.goRun(func() { agg.Run(ctx, aggregationWorkers) })
	return nil
}

// Bootstrap creates or reconciles the bootstrap policy through the
// loopback client as kube-apiserver's own hook does (retried every second
// for up to 30 seconds; ensurePolicy says what differs), and returns once
// it is in place.
func (c *RBAC) Bootstrap(ctx context.Context) error {
	policy := bootstrapPolicy()
	client, err := kubernetes.NewForConfig(c.loopback)
	if err != nil {
		return fmt.Errorf("%s: %w", RBACBootstrapCheck, err)
	}
	if err := ensurePolicy(ctx, policy, client); err != nil {
		return fmt.Errorf("%s: %w", RBACBootstrapCheck, err)
	}
	c.done.Store(true)
	return nil
}

func bootstrapPolicy() *rbacrest.PolicyData {
	return &rbacrest.PolicyData{
		ClusterRoles:               append(bootstrappolicy.ClusterRoles(), bootstrappolicy.ControllerRoles()...),
		ClusterRoleBindings:        append(bootstrappolicy.ClusterRoleBindings(), bootstrappolicy.ControllerRoleBindings()...),
		Roles:                      bootstrappolicy.NamespaceRoles(),
		RoleBindings:               bootstrappolicy.NamespaceRoleBindings(),
		ClusterRolesToAggregate:    bootstrappolicy.ClusterRolesToAggregate(),
		ClusterRoleBindingsToSplit: bootstrappolicy.ClusterRoleBindingsToSplit(),
	}
}

// PolicyKeys are the informer keys ("name", or "namespace/name") of the
// bootstrap policy's objects: its cluster roles, cluster role bindings,
// roles and role bindings.
func PolicyKeys() (clusterRoles, clusterRoleBindings, roles, roleBindings []string) {
	p := bootstrapPolicy()
	for _, r := range p.ClusterRoles {
		clusterRoles = append(clusterRoles, r.Name)
	}
	for _, b := range p.ClusterRoleBindings {
		clusterRoleBindings = append(clusterRoleBindings, b.Name)
	}
	for ns, rs := range p.Roles {
		for _, r := range rs {
			roles = append(roles, ns+"/"+r.Name)
		}
	}
	for ns, bs := range p.RoleBindings {
		for _, b := range bs {
			roleBindings = append(roleBindings, ns+"/"+b.Name)
		}
	}
	return clusterRoles, clusterRoleBindings, roles, roleBindings
}

// errNotBootstrapped fails the /readyz check until Bootstrap succeeds.
var errNotBootstrapped = errors.New("not finished")

// Ready is the /readyz check: nil once Bootstrap has succeeded.
func (c *RBAC) Ready(context.Context) error {
	if c.done.Load() {
		return nil
	}
	return errNotBootstrapped
}
