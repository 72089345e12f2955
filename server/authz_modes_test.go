package server

import (
	"fmt"
	"io"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"net/http"
	"slices"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
)

// get sends a GET of path with cfg's credentials and returns the status
// code and body.
func get(t *testing.T, cfg *rest.Config, path string) (int, string) {
	t.Helper()
	client, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, cfg.Host+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// statusMessage is the message of a Status body.
func statusMessage(t *testing.T, body string) string {
	t.Helper()
	var st metav1.Status
	if err := runtime.DecodeInto(clientgoscheme.Codecs.UniversalDecoder(), []byte(body), &st); err != nil {
		t.Fatalf("not a Status: %v\n%s", err, body)
	}
	return st.Message
}

// TestAnonymousAndAggregation: anonymous requests reach authorization as
// system:anonymous (RBAC's system:public-info-viewer lets them read the
// version and health; the API is 403), /metrics is forbidden to an unbound
// user and served to cluster-admin, and a new ClusterRole labelled
// aggregate-to-edit is merged into edit (and through it admin) by the
// aggregation controller, which lets an edit user create the custom
// resources it names.
func TestAnonymousAndAggregation(t *testing.T) {
	t.Parallel()
	s := startTestServer(t, []string{"nobody", "root", "editor"}, nil)
	s.create(t, clusterRoleBindingsGVR, binding("ClusterRoleBinding", "", "root", "ClusterRole", "cluster-admin", "root"))
	for _, tc := range []struct {
		cfg        *rest.Config
		path       string
		wantCode   int
		wantStatus string // the 403's message
	}{
		{cfg: s.anonymous(), path: "/version", wantCode: 200},
		{cfg: s.anonymous(), path: "/healthz", wantCode: 200},
		{cfg: s.anonymous(), path: "/readyz", wantCode: 200},
		{cfg: s.anonymous(), path: "/livez", wantCode: 200},
		{cfg: s.anonymous(), path: "/api/v1/pods", wantCode: 403,
			wantStatus: `pods is forbidden: User "system:anonymous" cannot list resource "pods" in API group "" at the cluster scope`},
		{cfg: s.anonymous(), path: "/api", wantCode: 403, wantStatus: `forbidden: User "system:anonymous" cannot get path "/api"`},
		{cfg: s.as("nobody"), path: "/api", wantCode: 200}, // system:discovery
		{cfg: s.as("nobody"), path: "/metrics", wantCode: 403, wantStatus: `forbidden: User "nobody" cannot get path "/metrics"`},
		// system:public-info-viewer names /readyz, not the paths below it.
		{cfg: s.as("nobody"), path: "/readyz/poststarthook/rbac/bootstrap-roles", wantCode: 403,
			wantStatus: `forbidden: User "nobody" cannot get path "/readyz/poststarthook/rbac/bootstrap-roles"`},
		{cfg: s.as("root"), path: "/readyz/poststarthook/rbac/bootstrap-roles", wantCode: 200},
		{cfg: s.as("root"), path: "/metrics", wantCode: 200},
	} {
		code, body := get(t, tc.cfg, tc.path)
		if code != tc.wantCode {
			t.Errorf("GET %s as %q: %d, want %d\n%s", tc.path, tc.cfg.BearerToken, code, tc.wantCode, body)
			continue
		}
		if tc.wantStatus != "" {
			if got := statusMessage(t, body); got != tc.wantStatus {
				t.Errorf("GET %s as %q: %q, want %q", tc.path, tc.cfg.BearerToken, got, tc.wantStatus)
			}
		}
	}

	// Aggregation.
	s.create(t, namespacesGVR, object("v1", "Namespace", "", matrixNamespace, nil))
	s.create(t, roleBindingsGVR, binding("RoleBinding", matrixNamespace, "editor", "ClusterRole", "edit", "editor"))
	s.create(t, crdsGVR, gadgetsCRD("gadgets"))
	gadgets := matrixResources[6]
	admin := dynamicFor(t, s.admin)
	waitFor(t, "gadgets to be served", func() (bool, error) {
		_, err := admin.Resource(gadgets.gvr).Namespace(matrixNamespace).List(t.Context(), metav1.ListOptions{})
		return err == nil, err
	})
	editor := dynamicFor(t, s.as("editor")).Resource(gadgets.gvr).Namespace(matrixNamespace)
	obj := gadgets.obj(matrixNamespace, "g1")
	const wantBefore = `gadgets.example.com is forbidden: User "editor" cannot create resource "gadgets" in API group "example.com" in the namespace "team"`
	if _, err := editor.Create(t.Context(), obj, metav1.CreateOptions{}); err == nil || err.Error() != wantBefore {
		t.Fatalf("create a gadget as editor before aggregation: %v, want %q", err, wantBefore)
	}
	rule := rbacv1.PolicyRule{APIGroups: []string{"example.com"}, Resources: []string{"gadgets"}, Verbs: []string{"*"}}
	s.create(t, clusterRolesGVR, object("rbac.authorization.k8s.io/v1", "ClusterRole", "", "gadgets-edit", map[string]any{
		"metadata": map[string]any{"name": "gadgets-edit", "labels": map[string]any{"rbac.authorization.k8s.io/aggregate-to-edit": "true"}},
		"rules":    []any{map[string]any{"apiGroups": []any{"example.com"}, "resources": []any{"gadgets"}, "verbs": []any{"*"}}}}))
	for _, role := range []string{"edit", "admin"} {
		waitFor(t, role+" to aggregate gadgets-edit", func() (bool, error) {
			u, err := admin.Resource(clusterRolesGVR).Get(t.Context(), role, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			r := &rbacv1.ClusterRole{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, r); err != nil {
				return false, err
			}
			return slices.ContainsFunc(r.Rules, func(got rbacv1.PolicyRule) bool { return fmt.Sprint(got) == fmt.Sprint(rule) }), nil
		})
	}
	// The authorizer's informers follow within moments.
	waitFor(t, "editor to create a gadget", func() (bool, error) {
		_, err := editor.Create(t.Context(), obj, metav1.CreateOptions{})
		return err == nil, err
	})
}

var crdsGVR = matrixResources[5].gvr

// TestAuthorizationModes: --authorization-mode AlwaysDeny refuses every
// user but system:masters, with the mode's reason in the message;
// AlwaysAllow allows every authenticated user and, as kube-apiserver does,
// turns anonymous requests off (401); --anonymous-auth=false answers them
// 401 even on /version.
func TestAuthorizationModes(t *testing.T) {
	t.Parallel()
	cm := object("v1", "ConfigMap", "default", "cm", map[string]any{"data": map[string]any{"k": "v"}})
	cms := matrixResources[1].gvr
	for _, tc := range []struct {
		name          string
		edit          func(*Options)
		wantUser      string // the 403's message to nobody's create; "" allowed
		wantAnonymous int    // GET /version without credentials
	}{
		{name: "AlwaysDeny", edit: func(o *Options) { o.AuthorizationModes = []string{"AlwaysDeny"} },
			wantUser: `configmaps is forbidden: User "nobody" cannot create resource "configmaps" in API group "" in the namespace "default": ` +
				`alwaysdeny: Everything is forbidden.`, // the union authorizer names the mode
			wantAnonymous: 403},
		{name: "AlwaysAllow", edit: func(o *Options) { o.AuthorizationModes = []string{"AlwaysAllow"} }, wantAnonymous: 401},
		{name: "RBAC without anonymous", edit: func(o *Options) { o.AnonymousAuth = false },
			wantUser:      `configmaps is forbidden: User "nobody" cannot create resource "configmaps" in API group "" in the namespace "default"`,
			wantAnonymous: 401},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := startTestServer(t, []string{"nobody"}, tc.edit)
			_, err := dynamicFor(t, s.as("nobody")).Resource(cms).Namespace("default").Create(t.Context(), cm, metav1.CreateOptions{})
			got, err := forbiddenMessage(err)
			if err != nil || got != tc.wantUser {
				t.Errorf("create a configmap as nobody: %q (%v), want 403 %q (\"\": allowed)", got, err, tc.wantUser)
			}
			// The admin (system:masters) is always allowed.
			_, err = dynamicFor(t, s.admin).Resource(cms).Namespace("default").Create(t.Context(),
				object("v1", "ConfigMap", "default", "admin", nil), metav1.CreateOptions{})
			if err != nil {
				t.Errorf("create a configmap as the admin: %v", err)
			}
			if code, body := get(t, s.anonymous(), "/version"); code != tc.wantAnonymous {
				t.Errorf("GET /version without credentials: %d, want %d\n%s", code, tc.wantAnonymous, body)
			}
		})
	}
}
