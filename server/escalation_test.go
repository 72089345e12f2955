package server

import (
	"context"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apiserver/pkg/endpoints/request"
	rbacvalidation "k8s.io/kubernetes/pkg/registry/rbac/validation"

	"github.com/stratadev/strata/internal/rbacmodel"
)

// TestRBACEscalation: writes of Roles and RoleBindings are refused when
// they would grant more than their author holds, with upstream's
// message (computed here by upstream's ConfirmNoEscalation over the
// bootstrap policy and the test's objects), on create, update, every
// patch type and apply; the "bind" and "escalate" verbs lift the check.
func TestRBACEscalation(t *testing.T) {
	t.Parallel()
	s := startTestServer(t, []string{"eve", "nsadmin", "binder", "escalator"}, nil)
	want := bootstrapPolicy(t)
	s.create(t, namespacesGVR, object("v1", "Namespace", "", matrixNamespace, nil))
	roles := []*unstructured.Unstructured{
		object("rbac.authorization.k8s.io/v1", "Role", matrixNamespace, "rbac-writer", map[string]any{"rules": []any{
			map[string]any{"apiGroups": []any{"rbac.authorization.k8s.io"}, "resources": []any{"rolebindings", "roles"},
				"verbs": []any{"create", "update", "patch"}}}}),
		object("rbac.authorization.k8s.io/v1", "Role", matrixNamespace, "admin-binder", map[string]any{"rules": []any{
			map[string]any{"apiGroups": []any{"rbac.authorization.k8s.io"}, "resources": []any{"clusterroles"},
				"verbs": []any{"bind"}, "resourceNames": []any{"admin"}}}}),
		object("rbac.authorization.k8s.io/v1", "Role", matrixNamespace, "role-escalator", map[string]any{"rules": []any{
			map[string]any{"apiGroups": []any{"rbac.authorization.k8s.io"}, "resources": []any{"roles"}, "verbs": []any{"escalate"}}}}),
	}
	s.create(t, rolesGVR, roles...)
	for _, r := range roles {
		want.Roles = append(want.Roles, toRole(t, r))
	}
	bindings := []*unstructured.Unstructured{
		binding("RoleBinding", matrixNamespace, "eve-edit", "ClusterRole", "edit", "eve"),
		binding("RoleBinding", matrixNamespace, "eve-writer", "Role", "rbac-writer", "eve"),
		binding("RoleBinding", matrixNamespace, "nsadmin", "ClusterRole", "admin", "nsadmin"),
		binding("RoleBinding", matrixNamespace, "binder-writer", "Role", "rbac-writer", "binder"),
		binding("RoleBinding", matrixNamespace, "binder-bind", "Role", "admin-binder", "binder"),
		binding("RoleBinding", matrixNamespace, "escalator-writer", "Role", "rbac-writer", "escalator"),
		binding("RoleBinding", matrixNamespace, "escalator-escalate", "Role", "role-escalator", "escalator"),
		binding("RoleBinding", matrixNamespace, "to-admin", "ClusterRole", "admin", "somebody"),
	}
	s.create(t, roleBindingsGVR, bindings...)
	// The authorizer and the escalation check read roles and bindings
	// from informers, each delivering its kind in the order written: once
	// the last role and the last binding count, all of them do.
	waitAllowed(t, s, "escalator", "escalate", "roles")
	waitAllowed(t, s, "somebody", "create", "rolebindings")
	for _, b := range bindings {
		want.RoleBindings = append(want.RoleBindings, toRoleBinding(t, b))
	}
	if err := want.Aggregate(); err != nil {
		t.Fatal(err)
	}
	resolver, _ := want.Resolver()
	// noEscalation is upstream's refusal of user granting rules, in the
	// namespace of the test.
	noEscalation := func(userName string, rules []rbacv1.PolicyRule) string {
		ctx := request.WithNamespace(request.WithUser(context.Background(), testUser(userName)), matrixNamespace)
		err := rbacvalidation.ConfirmNoEscalation(ctx, resolver, rules)
		if err == nil {
			t.Fatalf("%s holds the rules it grants", userName)
		}
		return err.Error()
	}
	adminRules := clusterRoleRules(t, want, "admin")
	clusterAdminRules := clusterRoleRules(t, want, "cluster-admin")
	nodesRule := []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: []string{"list"}}}
	nodesRole := object("rbac.authorization.k8s.io/v1", "Role", matrixNamespace, "nodes-lister", map[string]any{"rules": []any{
		map[string]any{"apiGroups": []any{""}, "resources": []any{"nodes"}, "verbs": []any{"list"}}}})

	for _, tc := range []struct {
		name, user string
		write      func(*testing.T, *testServer, string) error
		want       string // the 403's message; "" allowed
	}{
		{name: "edit binds admin", user: "eve",
			write: createObj(binding("RoleBinding", matrixNamespace, "eve-admin", "ClusterRole", "admin", "eve")),
			want:  `rolebindings.rbac.authorization.k8s.io "eve-admin" is forbidden: ` + noEscalation("eve", adminRules)},
		{name: "edit binds view", user: "eve",
			write: createObj(binding("RoleBinding", matrixNamespace, "eve-view", "ClusterRole", "view", "eve"))},
		{name: "admin binds cluster-admin", user: "nsadmin",
			write: createObj(binding("RoleBinding", matrixNamespace, "nsadmin-root", "ClusterRole", "cluster-admin", "nsadmin")),
			want:  `rolebindings.rbac.authorization.k8s.io "nsadmin-root" is forbidden: ` + noEscalation("nsadmin", clusterAdminRules)},
		{name: "bind verb binds admin", user: "binder",
			write: createObj(binding("RoleBinding", matrixNamespace, "binder-admin", "ClusterRole", "admin", "binder"))},
		{name: "edit grants nodes", user: "eve", write: createObj(nodesRole),
			want: `roles.rbac.authorization.k8s.io "nodes-lister" is forbidden: ` + noEscalation("eve", nodesRule)},
		{name: "edit grants nodes, by hand", user: "eve", write: createObj(nodesRole),
			want: `roles.rbac.authorization.k8s.io "nodes-lister" is forbidden: user "eve" (groups=["system:authenticated"]) ` +
				"is attempting to grant RBAC permissions not currently held:\n" + `{APIGroups:[""], Resources:["nodes"], Verbs:["list"]}`},
		{name: "escalate verb grants nodes", user: "escalator", write: createObj(nodesRole)},
		{name: "edit binds a missing role", user: "eve",
			write: createObj(binding("RoleBinding", matrixNamespace, "eve-missing", "ClusterRole", "missing", "eve")),
			want:  ""}, // a 404, checked below
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := forbiddenMessage(tc.write(t, s, tc.user))
			if tc.name == "edit binds a missing role" {
				if err == nil || err.Error() != `clusterroles.rbac.authorization.k8s.io "missing" not found` {
					t.Fatalf("got %v, want kube-apiserver's 404 of the role", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if got != tc.want {
				t.Errorf("got 403 %q\nwant %q", got, tc.want)
			}
		})
	}

	// Every way of writing the binding to admin (subjects only: roleRef
	// cannot change) is the same refusal.
	wantUpdate := `rolebindings.rbac.authorization.k8s.io "to-admin" is forbidden: ` + noEscalation("eve", adminRules)
	c := dynamicFor(t, s.as("eve")).Resource(roleBindingsGVR).Namespace(matrixNamespace)
	subjects := `{"subjects":[{"kind":"User","apiGroup":"rbac.authorization.k8s.io","name":"eve"}]}`
	for name, write := range map[string]func() error{
		"update": func() error {
			cur, err := dynamicFor(t, s.admin).Resource(roleBindingsGVR).Namespace(matrixNamespace).Get(t.Context(), "to-admin", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			_ = unstructured.SetNestedSlice(cur.Object, []any{map[string]any{"kind": "User", "apiGroup": "rbac.authorization.k8s.io", "name": "eve"}}, "subjects")
			_, err = c.Update(t.Context(), cur, metav1.UpdateOptions{})
			return err
		},
		"json patch": patchWith(c, types.JSONPatchType,
			`[{"op":"replace","path":"/subjects/0/name","value":"eve"}]`),
		"merge patch":     patchWith(c, types.MergePatchType, subjects),
		"strategic patch": patchWith(c, types.StrategicMergePatchType, subjects),
		"apply": func() error {
			_, err := c.Patch(t.Context(), "to-admin", types.ApplyPatchType, []byte(`{"apiVersion":"rbac.authorization.k8s.io/v1",`+
				`"kind":"RoleBinding","metadata":{"name":"to-admin","namespace":"`+matrixNamespace+`"},`+
				`"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"admin"},`+subjects[1:]),
				metav1.PatchOptions{FieldManager: "eve", Force: ptrTo(true)})
			return err
		},
	} {
		got, err := forbiddenMessage(write())
		if err != nil || got != wantUpdate {
			t.Errorf("%s of to-admin as eve: got %q (%v)\nwant 403 %q", name, got, err, wantUpdate)
		}
	}
}

func createObj(obj *unstructured.Unstructured) func(*testing.T, *testServer, string) error {
	return func(t *testing.T, s *testServer, userName string) error {
		gvr := roleBindingsGVR
		if obj.GetKind() == "Role" {
			gvr = rolesGVR
		}
		_, err := dynamicFor(t, s.as(userName)).Resource(gvr).Namespace(obj.GetNamespace()).Create(t.Context(), obj, metav1.CreateOptions{})
		return err
	}
}

func patchWith(c interface {
	Patch(context.Context, string, types.PatchType, []byte, metav1.PatchOptions, ...string) (*unstructured.Unstructured, error)
}, pt types.PatchType, patch string) func() error {
	return func() error {
		_, err := c.Patch(context.Background(), "to-admin", pt, []byte(patch), metav1.PatchOptions{})
		return err
	}
}

func clusterRoleRules(t *testing.T, p *rbacmodel.Policy, name string) []rbacv1.PolicyRule {
	for _, r := range p.ClusterRoles {
		if r.Name == name {
			return r.Rules
		}
	}
	t.Fatalf("no cluster role %s", name)
	return nil
}

func ptrTo[T any](v T) *T { return &v }

// waitAllowed waits until a SubjectAccessReview allows user to verb
// resource (of rbac.authorization.k8s.io) in the test's namespace.
func waitAllowed(t *testing.T, s *testServer, user, verb, resource string) {
	t.Helper()
	reviews := dynamicFor(t, s.admin).Resource(schema.GroupVersionResource{
		Group: "authorization.k8s.io", Version: "v1", Resource: "subjectaccessreviews"})
	review := object("authorization.k8s.io/v1", "SubjectAccessReview", "", "", map[string]any{"spec": map[string]any{
		"user": user, "resourceAttributes": map[string]any{"namespace": matrixNamespace, "verb": verb,
			"group": "rbac.authorization.k8s.io", "resource": resource}}})
	waitFor(t, user+" to be allowed to "+verb+" "+resource, func() (bool, error) {
		out, err := reviews.Create(t.Context(), review, metav1.CreateOptions{})
		if err != nil {
			return false, err
		}
		allowed, _, _ := unstructured.NestedBool(out.Object, "status", "allowed")
		return allowed, nil
	})
}
