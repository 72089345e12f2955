package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stratadev/strata/apiserver/apitest"

	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/stratadev/strata/internal/rbacmodel"
)

// testServer is a strata server started by server.Start for a test, with
// users of a token file (token = user name + "-token", in no group).
type testServer struct {
	admin *rest.Config
}

// startTestServer starts a server with users and edits of the options;
// it stops when the test ends.
func startTestServer(t *testing.T, users []string, edit func(*Options)) *testServer {
	t.Helper()
	dir := t.TempDir()
	var lines []string
	for i, u := range users {
		lines = append(lines, fmt.Sprintf("%s-token,%s,uid-%d", u, u, i))
	}
	tokenFile := filepath.Join(dir, "tokens.csv")
	if err := os.WriteFile(tokenFile, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	o := NewOptions()
	o.DataDir, o.SecurePort, o.TokenAuthFile = filepath.Join(dir, "data"), 0, tokenFile
	o.Logger = slog.New(slog.DiscardHandler)
	if edit != nil {
		edit(o)
	}
	_, admin := start(t, o)
	return &testServer{admin: admin}
}

// start starts a server with o until the test ends (checking that it
// stops cleanly) and returns it with its admin's client configuration,
// without client-side rate limits.
func start(t testing.TB, o *Options) (*Running, *rest.Config) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	r, err := Start(ctx, o)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		if err := r.Wait(); err != nil {
			t.Errorf("server stopped: %v", err)
		}
	})
	admin, err := clientcmd.BuildConfigFromFlags("", r.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	admin.QPS = -1
	return r, admin
}

// as is a client configuration of a token-file user.
func (s *testServer) as(name string) *rest.Config {
	cfg := rest.AnonymousClientConfig(s.admin)
	cfg.BearerToken = name + "-token"
	return cfg
}

// anonymous is a client configuration without credentials.
func (s *testServer) anonymous() *rest.Config { return rest.AnonymousClientConfig(s.admin) }

func dynamicFor(t *testing.T, cfg *rest.Config) *dynamic.DynamicClient {
	t.Helper()
	c, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// apply creates objects as the admin.
func (s *testServer) create(t *testing.T, gvr schema.GroupVersionResource, objs ...*unstructured.Unstructured) {
	t.Helper()
	c := dynamicFor(t, s.admin)
	for _, obj := range objs {
		if _, err := c.Resource(gvr).Namespace(obj.GetNamespace()).Create(t.Context(), obj, metav1.CreateOptions{}); err != nil {
			t.Fatalf("creating %s %s/%s: %v", gvr.Resource, obj.GetNamespace(), obj.GetName(), err)
		}
	}
}

func object(apiVersion, kind, namespace, name string, fields map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": apiVersion, "kind": kind,
		"metadata": map[string]any{"name": name}}}
	if namespace != "" {
		u.SetNamespace(namespace)
	}
	for k, v := range fields {
		u.Object[k] = v
	}
	return u
}

func binding(kind, namespace, name, roleKind, role, userName string) *unstructured.Unstructured {
	return object("rbac.authorization.k8s.io/v1", kind, namespace, name, map[string]any{
		"subjects": []any{map[string]any{"kind": "User", "apiGroup": "rbac.authorization.k8s.io", "name": userName}},
		"roleRef":  map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": roleKind, "name": role}})
}

// gadgetsCRD is a namespaced custom kind without schema constraints.
func gadgetsCRD(plural string) *unstructured.Unstructured {
	kind := strings.ToUpper(plural[:1]) + strings.TrimSuffix(plural[1:], "s")
	return object("apiextensions.k8s.io/v1", "CustomResourceDefinition", "", plural+".example.com", map[string]any{
		"spec": map[string]any{"group": "example.com", "scope": "Namespaced",
			"names": map[string]any{"plural": plural, "singular": strings.ToLower(kind), "kind": kind},
			"versions": []any{map[string]any{"name": "v1", "served": true, "storage": true,
				"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object",
					"x-kubernetes-preserve-unknown-fields": true}}}}}})
}

// waitFor polls cond (every 50ms, up to 30s): for what the server does in
// the background (a CRD served, an aggregated role filled).
func waitFor(t *testing.T, what string, cond func() (bool, error)) {
	t.Helper()
	waitWithin(t, 30*time.Second, what, cond)
}

// waitWithin is waitFor with its own deadline; cond's errors are retried,
// the last one reported.
func waitWithin(t *testing.T, deadline time.Duration, what string, cond func() (bool, error)) {
	t.Helper()
	apitest.WaitWithin(t, deadline, what, cond)
}

// bootstrapPolicy is upstream's bootstrap policy, computed independently
// of the server (package rbacmodel).
func bootstrapPolicy(t *testing.T) *rbacmodel.Policy {
	t.Helper()
	p, err := rbacmodel.Bootstrap()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// expectedAuthorizer is upstream's authorizer over p.
func expectedAuthorizer(t *testing.T, p *rbacmodel.Policy) authorizer.Authorizer {
	t.Helper()
	a, err := p.Authorizer()
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// expectForbidden is what kube-apiserver answers when a does not allow
// attrs; "" when a allows it.
func expectForbidden(t *testing.T, a authorizer.Authorizer, attrs authorizer.AttributesRecord) string {
	t.Helper()
	msg, err := rbacmodel.Forbidden(a, attrs)
	if err != nil {
		t.Fatal(err)
	}
	return msg
}

// forbiddenMessage is the message of a 403 error, or "" for an error that
// is not one (or none).
func forbiddenMessage(err error) (string, error) {
	if err == nil {
		return "", nil
	}
	var st apierrors.APIStatus
	if errors.As(err, &st) && st.Status().Code == http.StatusForbidden {
		return st.Status().Message, nil
	}
	return "", err
}

// testUser is a token-file user as the authenticator makes it.
func testUser(name string) user.Info {
	return &user.DefaultInfo{Name: name, Groups: []string{user.AllAuthenticated}}
}

var (
	roleBindingsGVR        = rbacv1.SchemeGroupVersion.WithResource("rolebindings")
	clusterRoleBindingsGVR = rbacv1.SchemeGroupVersion.WithResource("clusterrolebindings")
	clusterRolesGVR        = rbacv1.SchemeGroupVersion.WithResource("clusterroles")
	rolesGVR               = rbacv1.SchemeGroupVersion.WithResource("roles")
)

func toRoleBinding(t *testing.T, u *unstructured.Unstructured) *rbacv1.RoleBinding {
	t.Helper()
	out := &rbacv1.RoleBinding{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, out); err != nil {
		t.Fatal(err)
	}
	return out
}

func toClusterRoleBinding(t *testing.T, u *unstructured.Unstructured) *rbacv1.ClusterRoleBinding {
	t.Helper()
	out := &rbacv1.ClusterRoleBinding{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, out); err != nil {
		t.Fatal(err)
	}
	return out
}

var namespacesGVR = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}

func toRole(t *testing.T, u *unstructured.Unstructured) *rbacv1.Role {
	t.Helper()
	out := &rbacv1.Role{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, out); err != nil {
		t.Fatal(err)
	}
	return out
}

// established says whether crd's Established condition is true: its
// resources are served.
func established(crd *apiextensionsv1.CustomResourceDefinition) bool {
	for _, c := range crd.Status.Conditions {
		if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
			return true
		}
	}
	return false
}
