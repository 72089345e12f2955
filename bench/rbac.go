package bench

import (
	"context"
	"fmt"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// The RBAC cells: a typed get and a create of ConfigMaps as a user who is
// not in system:masters, under RBAC (bound to the edit ClusterRole by one
// of rbacBindings RoleBindings in the namespace, the others binding other
// users), beside the same operation as the admin, whom the authorizer
// allows first (system:masters). The ratio is user ÷ admin: what
// authorization costs a request when the authorizer walks a namespace of
// rbacBindings bindings (the report's "etcd" column is the admin cell).

// Operation names of the RBAC cells.
const (
	opGetRBAC       = "get-rbac"
	opGetMasters    = "get-masters"
	opCreateRBAC    = "create-rbac"
	opCreateMasters = "create-masters"
)

// benchUser is the token-file user of the RBAC cells, and rbacBindings the
// RoleBindings in the namespace, its own included.
const (
	benchUser      = "bench-user"
	benchUserToken = "bench-user-token-7f3a"
	rbacBindings   = 1000
)

// rbacPairs are the RBAC cells, each beside the admin's.
func (r *runner) rbacPairs() []pair {
	return []pair{
		{strata: op{side: sideStrata, name: opGetRBAC, prepare: r.prepareRBAC, run: r.typedGet(r.env.user)},
			etcd: op{side: sideStrata, name: opGetMasters, run: r.typedGet(r.env.cs)}},
		{strata: op{side: sideStrata, name: opCreateRBAC, prepare: r.prepareRBAC, run: r.createAs(r.env.user, "rbac")},
			etcd: op{side: sideStrata, name: opCreateMasters, run: r.createAs(r.env.cs, "masters")}},
	}
}

// prepareRBAC creates the RoleBindings (once) and waits until the user's
// own, created last, lets it read: the authorizer's informers deliver in
// order, so it then holds every binding.
func (r *runner) prepareRBAC(ctx context.Context) error {
	if r.rbacReady {
		return nil
	}
	bindings := r.env.cs.RbacV1().RoleBindings(namespace)
	err := parallel(ctx, rbacBindings-1, 16, func(ctx context.Context, i int) error {
		_, err := bindings.Create(ctx, roleBinding(fmt.Sprintf("other-%04d", i), fmt.Sprintf("other-user-%04d", i)),
			metav1.CreateOptions{})
		return err
	})
	if err != nil {
		return fmt.Errorf("bench: creating RoleBindings: %w", err)
	}
	if _, err := bindings.Create(ctx, roleBinding(benchUser, benchUser), metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("bench: binding %s: %w", benchUser, err)
	}
	deadline := time.Now().Add(listTimeout)
	for {
		_, err := r.env.user.CoreV1().ConfigMaps(namespace).Get(ctx, listName(0), metav1.GetOptions{})
		if err == nil {
			r.rbacReady = true
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("bench: %s cannot read %s %s after binding it: %w", benchUser, listTimeout, namespace, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// roleBinding binds the edit ClusterRole to a user in the namespace.
func roleBinding(name, userName string) *rbacv1.RoleBinding {
	return &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: userName}},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "edit"}}
}

// createAs creates ConfigMaps through cs, named apart by who.
func (r *runner) createAs(cs kubernetes.Interface, who string) func(context.Context, call) error {
	return func(ctx context.Context, c call) error {
		_, err := cs.CoreV1().ConfigMaps(namespace).Create(ctx, r.configMap(fmt.Sprintf("create-%s-c%d-%d", who, c.conc, c.i)),
			metav1.CreateOptions{})
		return err
	}
}
