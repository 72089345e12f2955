package authorize

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/endpoints/request"
	rbaclisters "k8s.io/client-go/listers/rbac/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/kubernetes/plugin/pkg/auth/authorizer/rbac"
)

// policy: alice may impersonate the user bob, the group devs, the extra
// scopes=view and the service account ns/robot; nobody else may
// impersonate anything.
var policy = []runtime.Object{
	&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "impersonate-bob"}, Rules: []rbacv1.PolicyRule{
		{Verbs: []string{"impersonate"}, APIGroups: []string{""}, Resources: []string{"users"}, ResourceNames: []string{"bob"}},
		{Verbs: []string{"impersonate"}, APIGroups: []string{""}, Resources: []string{"groups"}, ResourceNames: []string{"devs"}},
		{Verbs: []string{"impersonate"}, APIGroups: []string{"authentication.k8s.io"}, Resources: []string{"userextras/scopes"}, ResourceNames: []string{"view"}},
		{Verbs: []string{"impersonate"}, APIGroups: []string{""}, Resources: []string{"serviceaccounts"}, ResourceNames: []string{"robot"}},
	}},
	&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "alice"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "impersonate-bob"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "alice"}}},
}

// staticRBAC is upstream's RBAC authorizer over listers of objs
// (cluster roles and cluster role bindings).
func staticRBAC(t testing.TB, objs []runtime.Object) *rbac.RBACAuthorizer {
	t.Helper()
	idx := func() cache.Indexer {
		return cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	}
	roles, bindings, clusterRoles, clusterBindings := idx(), idx(), idx(), idx()
	for _, obj := range objs {
		target := clusterRoles
		if _, ok := obj.(*rbacv1.ClusterRoleBinding); ok {
			target = clusterBindings
		}
		if err := target.Add(obj); err != nil {
			t.Fatal(err)
		}
	}
	return rbac.New(&rbac.RoleGetter{Lister: rbaclisters.NewRoleLister(roles)},
		&rbac.RoleBindingLister{Lister: rbaclisters.NewRoleBindingLister(bindings)},
		&rbac.ClusterRoleGetter{Lister: rbaclisters.NewClusterRoleLister(clusterRoles)},
		&rbac.ClusterRoleBindingLister{Lister: rbaclisters.NewClusterRoleBindingLister(clusterBindings)})
}

// serve sends a GET of path as requester with headers through Impersonate
// and returns the answer and the user the next handler saw (nil when it
// was not called).
func serve(h http.Handler, requester user.Info, path string, headers http.Header) (*httptest.ResponseRecorder, user.Info) {
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r.URL.Path = path
	r.Header = headers
	r = r.WithContext(request.WithUser(r.Context(), requester))
	var seen user.Info
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen, _ = request.UserFrom(r.Context())
		for name := range r.Header {
			if len(name) > 12 && name[:12] == "Impersonate-" {
				panic("impersonation header " + name + " passed on")
			}
		}
	})
	rec := httptest.NewRecorder()
	Impersonate(next, h.(*rbacHandler).a).ServeHTTP(rec, r)
	return rec, seen
}

// rbacHandler carries the authorizer to serve.
type rbacHandler struct {
	http.Handler
	a *rbac.RBACAuthorizer
}

var (
	alice = &user.DefaultInfo{Name: "alice", Groups: []string{user.AllAuthenticated}}
	eve   = &user.DefaultInfo{Name: "eve", Groups: []string{user.AllAuthenticated}}
)

func TestImpersonate(t *testing.T) {
	h := &rbacHandler{a: staticRBAC(t, policy)}
	for _, tc := range []struct {
		name      string
		requester user.Info
		headers   http.Header
		want      *user.DefaultInfo // the impersonated user, when allowed
		code      int
		body      string // the refusal, exact
	}{
		{name: "no headers", requester: eve, headers: http.Header{}, want: eve, code: 200},
		{name: "a user, groups and extra", requester: alice,
			headers: http.Header{"Impersonate-User": {"bob"}, "Impersonate-Group": {"devs"}, "Impersonate-Extra-Scopes": {"view"}},
			want:    &user.DefaultInfo{Name: "bob", Groups: []string{"devs", user.AllAuthenticated}, Extra: map[string][]string{"scopes": {"view"}}},
			code:    200},
		{name: "a service account gets its groups", requester: alice,
			headers: http.Header{"Impersonate-User": {"system:serviceaccount:ns:robot"}},
			want: &user.DefaultInfo{Name: "system:serviceaccount:ns:robot",
				Groups: []string{"system:serviceaccounts", "system:serviceaccounts:ns", user.AllAuthenticated}},
			code: 200},
		{name: "a user not allowed", requester: eve, headers: http.Header{"Impersonate-User": {"bob"}}, code: 403,
			body: `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"pods is forbidden: User \"eve\" cannot impersonate-on:user-info:list resource \"pods\" in API group \"\" in the namespace \"default\"","reason":"Forbidden","details":{"kind":"pods"},"code":403}` + "\n"},
		{name: "a service account not allowed", requester: eve, headers: http.Header{"Impersonate-User": {"system:serviceaccount:ns:robot"}}, code: 403,
			body: `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"pods is forbidden: User \"eve\" cannot impersonate-on:serviceaccount:list resource \"pods\" in API group \"\" in the namespace \"default\"","reason":"Forbidden","details":{"kind":"pods"},"code":403}` + "\n"},
		{name: "a group without a user", requester: alice, headers: http.Header{"Impersonate-Group": {"devs"}}, code: 400,
			body: `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"requested \u0026user.DefaultInfo{Name:\"\", UID:\"\", Groups:[]string{\"devs\"}, Extra:map[string][]string(nil)} without impersonating a user name","reason":"BadRequest","code":400}` + "\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec, seen := serve(h, tc.requester, "/api/v1/namespaces/default/pods", tc.headers)
			if rec.Code != tc.code {
				t.Fatalf("code %d, want %d: %s", rec.Code, tc.code, rec.Body)
			}
			if tc.want != nil {
				if diff := cmp.Diff(user.Info(tc.want), seen); diff != "" {
					t.Errorf("user (-want +got):\n%s", diff)
				}
				return
			}
			if seen != nil {
				t.Errorf("next handler called as %v", seen)
			}
			if rec.Body.String() != tc.body {
				t.Errorf("body:\n got: %s\nwant: %s", rec.Body, tc.body)
			}
		})
	}
}

// FuzzImpersonate sends random impersonation headers through Impersonate
// with the static policy: never a panic, never a 5xx, and an impersonated
// user only within what alice was allowed.
func FuzzImpersonate(f *testing.F) {
	f.Add("bob", "devs", "", "", "Scopes", "view", "/api/v1/pods", true)
	f.Add("bob", "admins", "uid-1", "", "", "", "/apis/apps/v1/namespaces/x/deployments/y", true)
	f.Add("", "devs", "", "", "", "", "/api", true)
	f.Add("system:serviceaccount:ns:robot", "", "", "", "", "", "/healthz", false)
	f.Add("system:node:n1", "", "", "system:nodes", "a%2Fb", "", "/api/v1/nodes/n1/proxy", true)
	f.Add("bob", "", "", "", "scopes", "", "/%zz", true)
	a := staticRBAC(f, policy)
	h := &rbacHandler{a: a}
	f.Fuzz(func(t *testing.T, name, group, uid, group2, extraKey, extraValue, path string, asAlice bool) {
		headers := http.Header{}
		for key, value := range map[string]string{"Impersonate-User": name, "Impersonate-Group": group, "Impersonate-Uid": uid,
			"Impersonate-Extra-" + extraKey: extraValue} {
			if value != "" {
				headers[key] = []string{value}
			}
		}
		if group2 != "" {
			headers["Impersonate-Group"] = append(headers["Impersonate-Group"], group2)
		}
		requester := eve
		if asAlice {
			requester = alice
		}
		rec, seen := serve(h, requester, path, headers)
		if rec.Code >= 500 {
			t.Fatalf("headers %v, path %q: %d %s", headers, path, rec.Code, rec.Body)
		}
		if seen == nil || seen == requester {
			return
		}
		if !asAlice || !allowedForAlice(seen) {
			t.Fatalf("headers %v: %s impersonated %+v", headers, requester.GetName(), seen)
		}
	})
}

// allowedForAlice says whether u is a user the policy lets alice become.
func allowedForAlice(u user.Info) bool {
	groups := slices.DeleteFunc(slices.Clone(u.GetGroups()), func(g string) bool { return g == user.AllAuthenticated })
	switch u.GetName() {
	case "bob":
		for k, values := range u.GetExtra() {
			if k != "scopes" || slices.ContainsFunc(values, func(v string) bool { return v != "view" }) {
				return false
			}
		}
		return u.GetUID() == "" && !slices.ContainsFunc(groups, func(g string) bool { return g != "devs" })
	case "system:serviceaccount:ns:robot":
		return u.GetUID() == "" && len(u.GetExtra()) == 0 &&
			slices.Equal(groups, []string{"system:serviceaccounts", "system:serviceaccounts:ns"})
	}
	return false
}
