package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"

	"github.com/stratadev/strata/internal/rbacmodel"
)

// The users of TestRBACWithKubectl: bound to view, edit and admin in the
// namespace "team", to cluster-admin, and to nothing.
var kubectlRBACUsers = []struct{ name, role string }{
	{"viewer", "view"}, {"editor", "edit"}, {"nsadmin", "admin"}, {"root", "cluster-admin"}, {"nobody", ""},
}

// kubectlRBACResources: what kubectl names, and the manifest of an object.
var kubectlRBACResources = []struct {
	kubectl, group, resource string
	namespaced               bool
	manifest                 string // with NAME for the object's name
}{
	{"secrets", "", "secrets", true, `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"NAME"},"stringData":{"k":"v"}}`},
	{"deployments.apps", "apps", "deployments", true, `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"NAME"},` +
		`"spec":{"selector":{"matchLabels":{"app":"a"}},"template":{"metadata":{"labels":{"app":"a"}},` +
		`"spec":{"containers":[{"name":"c","image":"busybox"}]}}}}`},
	{"rolebindings.rbac.authorization.k8s.io", "rbac.authorization.k8s.io", "rolebindings", true,
		`{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"RoleBinding","metadata":{"name":"NAME"},` +
			`"subjects":[{"kind":"User","apiGroup":"rbac.authorization.k8s.io","name":"somebody"}],` +
			`"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"view"}}`},
	{"namespaces", "", "namespaces", false, `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"NAME"}}`},
	{"gizmos.example.com", "example.com", "gizmos", true, `{"apiVersion":"example.com/v1","kind":"Gizmo","metadata":{"name":"NAME"}}`},
}

const gizmosCRD = `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"gizmos.example.com"},
"spec":{"group":"example.com","scope":"Namespaced","names":{"plural":"gizmos","singular":"gizmo","kind":"Gizmo"},
"versions":[{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}}]}}`

// TestRBACWithKubectl runs kubectl as users bound to view, edit, admin
// (RoleBindings in "team"), cluster-admin and nothing: get, list, create
// and delete (writes as server dry runs) of secrets, deployments,
// rolebindings, namespaces and a custom resource. Each answer is what
// upstream's RBAC authorizer decides over the bootstrap policy computed in
// the test: exit 0, or kubectl's report of the 403 with kube-apiserver's
// exact message. An edit user allowed to write RoleBindings still cannot
// bind admin.
func TestRBACWithKubectl(t *testing.T) {
	t.Parallel()
	dataDir := t.TempDir()
	dir := t.TempDir()
	var tokens []string
	for i, u := range append(kubectlRBACUsers, struct{ name, role string }{"eve", ""}) {
		tokens = append(tokens, fmt.Sprintf("%s-token,%s,uid-%d", u.name, u.name, i))
	}
	tokenFile := filepath.Join(dir, "tokens.csv")
	writeFile(t, tokenFile, strings.Join(tokens, "\n")+"\n")
	startServer(t, dataDir, "--token-auth-file", tokenFile)
	admin := plainKubectl(t, dataDir)
	admin.ok(t, "create", "namespace", "team")
	crd := filepath.Join(dir, "crd.json")
	writeFile(t, crd, gizmosCRD)
	admin.ok(t, "apply", "-f", crd)
	admin.ok(t, "wait", "--for=condition=Established", "crd/gizmos.example.com")

	p, err := rbacmodel.Bootstrap()
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range kubectlRBACUsers {
		switch u.role {
		case "":
		case "cluster-admin":
			admin.ok(t, "create", "clusterrolebinding", u.name, "--clusterrole="+u.role, "--user="+u.name)
			p.ClusterRoleBindings = append(p.ClusterRoleBindings, &rbacv1.ClusterRoleBinding{
				ObjectMeta: metav1.ObjectMeta{Name: u.name}, Subjects: userSubject(u.name),
				RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: u.role}})
		default:
			admin.ok(t, "create", "rolebinding", u.name, "-n", "team", "--clusterrole="+u.role, "--user="+u.name)
			p.RoleBindings = append(p.RoleBindings, &rbacv1.RoleBinding{
				ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: u.name}, Subjects: userSubject(u.name),
				RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: u.role}})
		}
	}
	for _, res := range kubectlRBACResources {
		f := filepath.Join(dir, res.resource+"-target.json")
		writeFile(t, f, strings.ReplaceAll(res.manifest, "NAME", "target"))
		if res.namespaced {
			admin.ok(t, "create", "-n", "team", "-f", f)
		} else {
			admin.ok(t, "create", "-f", f)
		}
	}
	expected, err := p.Authorizer()
	if err != nil {
		t.Fatal(err)
	}

	cells := 0
	for _, u := range kubectlRBACUsers {
		k := plainKubectl(t, dataDir)
		for _, res := range kubectlRBACResources {
			manifest := filepath.Join(dir, res.resource+"-"+u.name+".json")
			writeFile(t, manifest, strings.ReplaceAll(res.manifest, "NAME", "by-"+u.name))
			for _, verb := range []string{"get", "list", "create", "delete"} {
				args, name := []string{"--token", u.name + "-token"}, ""
				switch verb {
				case "get", "delete":
					name = "target"
					args = append(args, verb, res.kubectl, name)
				case "list":
					args = append(args, "get", res.kubectl)
				case "create":
					args = append(args, "create", "-f", manifest)
				}
				if verb == "create" || verb == "delete" {
					args = append(args, "--dry-run=server")
				}
				ns := ""
				if res.namespaced {
					ns = "team"
					args = append(args, "-n", ns)
				} else if name != "" {
					ns = name // RequestInfoFactory: a namespace's name is its namespace
				}
				want, err := rbacmodel.Forbidden(expected, authorizer.AttributesRecord{
					User: &user.DefaultInfo{Name: u.name, Groups: []string{user.AllAuthenticated}}, Verb: verb,
					Namespace: ns, APIGroup: res.group, APIVersion: "v1", Resource: res.resource, Name: name, ResourceRequest: true})
				if err != nil {
					t.Fatal(err)
				}
				r := k.run(t, args...)
				cells++
				if want == "" {
					if r.code != 0 {
						t.Errorf("want allowed: %v", r)
					}
					continue
				}
				if r.code != 1 || !strings.Contains(r.stderr, "Error from server (Forbidden): ") || !strings.Contains(r.stderr, want+"\n") {
					t.Errorf("want exit 1 and the 403 %q: %v", want, r)
				}
			}
		}
	}
	t.Logf("%d kubectl cells", cells)

	// Escalation: eve may edit and write RoleBindings, not bind admin.
	admin.ok(t, "create", "rolebinding", "eve-edit", "-n", "team", "--clusterrole=edit", "--user=eve")
	admin.ok(t, "create", "role", "rb-writer", "-n", "team", "--verb=create", "--resource=rolebindings.rbac.authorization.k8s.io")
	admin.ok(t, "create", "rolebinding", "eve-writer", "-n", "team", "--role=rb-writer", "--user=eve")
	r := plainKubectl(t, dataDir).run(t, "--token", "eve-token", "create", "rolebinding", "eve-admin", "-n", "team",
		"--clusterrole=admin", "--user=eve")
	const wantPrefix = `error: failed to create rolebinding: rolebindings.rbac.authorization.k8s.io "eve-admin" is forbidden: ` +
		`user "eve" (groups=["system:authenticated"]) is attempting to grant RBAC permissions not currently held:` + "\n"
	if r.code != 1 || !strings.HasPrefix(r.stderr, wantPrefix) ||
		!strings.Contains(r.stderr, `{APIGroups:["rbac.authorization.k8s.io"], Resources:["roles"], Verbs:["create" "delete" "deletecollection" "get" "list" "patch" "update" "watch"]}`) {
		t.Errorf("eve binds admin: want exit 1 and stderr starting %q: %v", wantPrefix, r)
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

func userSubject(name string) []rbacv1.Subject {
	return []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: name}}
}
