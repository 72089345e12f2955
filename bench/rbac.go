package bench

import (
	"context"
	"fmt"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/stratadev/strata/bench/internal/cell"
	"github.com/stratadev/strata/bench/internal/layout"
	"github.com/stratadev/strata/bench/internal/servers"
)

// rbacBindings is how many RoleBindings the RBAC cells' namespace holds,
// the user's own included.
const rbacBindings = 1000

// The RBAC cells: a typed get and a create of ConfigMaps as a user who is
// not in system:masters, under RBAC (bound to the edit ClusterRole by one
// of rbacBindings RoleBindings in the namespace, the others binding other
// users), beside the same operation as the admin, whom the authorizer
// allows first (system:masters). The ratio is user ÷ admin: what
// authorization costs a request when the authorizer walks a namespace of
// rbacBindings bindings (the report's "etcd" column is the admin cell).

// prepareRBAC creates the RoleBindings on t (once) and waits until the
// user's own, created last, lets it read: the authorizer's informers
// deliver in order, so it then holds every binding.
func (r *runner) prepareRBAC(t *target) func(context.Context) error {
	return func(ctx context.Context) error {
		if t.rbacReady {
			return nil
		}
		// edit aggregates view, itself aggregated.
		for _, role := range []string{"view", "edit"} {
			if err := aggregateRole(ctx, t, role); err != nil {
				return err
			}
		}
		if err := createBindings(ctx, t); err != nil {
			return err
		}
		deadline := time.Now().Add(listTimeout)
		for {
			_, err := t.user.CoreV1().ConfigMaps(layout.Namespace).Get(ctx, listName(0), metav1.GetOptions{})
			if err == nil {
				t.rbacReady = true
				return nil
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("bench: %s cannot read %s on %s %s after binding it: %w", servers.User, layout.Namespace, t.side, listTimeout, err)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
}

// aggregateRole fills an aggregated ClusterRole that has no rules yet with
// those of the ClusterRoles its aggregation rule selects: what
// kube-controller-manager's clusterrole-aggregation controller does, which
// kube-apiserver alone lacks (strata aggregates the bootstrap roles
// itself, so there it finds the rules in place).
func aggregateRole(ctx context.Context, t *target, name string) error {
	roles := t.cs.RbacV1().ClusterRoles()
	role, err := roles.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("bench: reading ClusterRole %s on %s: %w", name, t.side, err)
	}
	if len(role.Rules) > 0 || role.AggregationRule == nil {
		return nil
	}
	for _, sel := range role.AggregationRule.ClusterRoleSelectors {
		l, err := roles.List(ctx, metav1.ListOptions{LabelSelector: metav1.FormatLabelSelector(&sel)})
		if err != nil {
			return fmt.Errorf("bench: listing the ClusterRoles aggregated into %s on %s: %w", name, t.side, err)
		}
		for _, r := range l.Items {
			if r.Name != name {
				role.Rules = append(role.Rules, r.Rules...)
			}
		}
	}
	if _, err := roles.Update(ctx, role, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("bench: aggregating ClusterRole %s on %s: %w", name, t.side, err)
	}
	return nil
}

// createBindings creates the other users' RoleBindings, then the user's.
func createBindings(ctx context.Context, t *target) error {
	bindings := t.cs.RbacV1().RoleBindings(layout.Namespace)
	err := cell.Parallel(ctx, rbacBindings-1, 16, func(ctx context.Context, i int) error {
		_, err := bindings.Create(ctx, roleBinding(fmt.Sprintf("other-%04d", i), fmt.Sprintf("other-user-%04d", i)),
			metav1.CreateOptions{})
		return err
	})
	if err != nil {
		return fmt.Errorf("bench: creating RoleBindings on %s: %w", t.side, err)
	}
	if _, err := bindings.Create(ctx, roleBinding(servers.User, servers.User), metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("bench: binding %s on %s: %w", servers.User, t.side, err)
	}
	return nil
}

// roleBinding binds the edit ClusterRole to a user in the namespace.
func roleBinding(name, userName string) *rbacv1.RoleBinding {
	return &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: userName}},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "edit"}}
}

// createAs creates ConfigMaps through cs, named apart by who.
func (r *runner) createAs(cs kubernetes.Interface, who string) func(context.Context, cell.Call) error {
	return func(ctx context.Context, c cell.Call) error {
		_, err := cs.CoreV1().ConfigMaps(layout.Namespace).Create(ctx, r.configMap(fmt.Sprintf("create-%s-c%d-%d", who, c.Conc, c.I)),
			metav1.CreateOptions{})
		return err
	}
}
