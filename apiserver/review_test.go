package apiserver

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"
	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/client-go/kubernetes"
	rbaclisters "k8s.io/client-go/listers/rbac/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/kubernetes/plugin/pkg/auth/authorizer/rbac"

	"github.com/stratadev/strata/apiserver/authn"
	"github.com/stratadev/strata/apiserver/filters"
	"github.com/stratadev/strata/apiserver/filters/authorize"
)

// reviewPolicy is the static RBAC policy of the review tests: alice edits
// configmaps in "team"; the group "readers" reads pods everywhere; carol
// may impersonate users, groups and the extra "scopes".
var reviewPolicy = []runtime.Object{
	&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "editor", Namespace: "team"},
		Rules: []rbacv1.PolicyRule{{Verbs: []string{"create", "get"}, APIGroups: []string{""}, Resources: []string{"configmaps"}}}},
	&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "alice-editor", Namespace: "team"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "editor"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "alice"}}},
	&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "pod-reader"},
		Rules: []rbacv1.PolicyRule{{Verbs: []string{"get", "list", "watch"}, APIGroups: []string{""}, Resources: []string{"pods"}}}},
	&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "readers"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "pod-reader"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: "readers"}}},
	&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "impersonator"},
		Rules: []rbacv1.PolicyRule{{Verbs: []string{"impersonate"}, APIGroups: []string{""}, Resources: []string{"users", "groups"}},
			{Verbs: []string{"impersonate"}, APIGroups: []string{"authentication.k8s.io"}, Resources: []string{"userextras/scopes"}}}},
	&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "carol-impersonates"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "impersonator"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "carol"}}},
}

// staticRBAC is upstream's RBAC authorizer over listers of policy.
func staticRBAC(t testing.TB, policy []runtime.Object) *rbac.RBACAuthorizer {
	t.Helper()
	idx := func() cache.Indexer {
		return cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	}
	roles, bindings, clusterRoles, clusterBindings := idx(), idx(), idx(), idx()
	for _, obj := range policy {
		var err error
		switch obj.(type) {
		case *rbacv1.Role:
			err = roles.Add(obj)
		case *rbacv1.RoleBinding:
			err = bindings.Add(obj)
		case *rbacv1.ClusterRole:
			err = clusterRoles.Add(obj)
		case *rbacv1.ClusterRoleBinding:
			err = clusterBindings.Add(obj)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return rbac.New(&rbac.RoleGetter{Lister: rbaclisters.NewRoleLister(roles)},
		&rbac.RoleBindingLister{Lister: rbaclisters.NewRoleBindingLister(bindings)},
		&rbac.ClusterRoleGetter{Lister: rbaclisters.NewClusterRoleLister(clusterRoles)},
		&rbac.ClusterRoleBindingLister{Lister: rbaclisters.NewClusterRoleBindingLister(clusterBindings)})
}

// reviewUsers are the bearer tokens of the review tests and their users.
var reviewUsers = map[string]user.Info{
	"alice-token": &user.DefaultInfo{Name: "alice", UID: "alice-uid", Groups: []string{"devs"},
		Extra: map[string][]string{"example.com/team": {"blue"}}},
	"bob-token":   &user.DefaultInfo{Name: "bob"},
	"carol-token": &user.DefaultInfo{Name: "carol"},
}

// reviewServer serves the API behind authentication (reviewUsers) and
// impersonation, with policy's RBAC as the authorizer (nil policy: the
// default, everything allowed); clientFor returns a client of a token.
type reviewServer struct {
	*testServer
	url string
}

func newReviewServer(t *testing.T, policy []runtime.Object) *reviewServer {
	t.Helper()
	a := &authn.Authenticator{Tokens: reviewUsers}
	var az *rbac.RBACAuthorizer
	ts := newTestServer(t, func(c *Config) {
		c.TokenAuthenticator = a
		if policy != nil {
			az = staticRBAC(t, policy)
			c.Authorizer, c.RuleResolver = az, az
		}
	})
	cfg := filters.Config{Authenticate: func(h http.Handler) http.Handler { return authn.Middleware(a, h) }}
	if az != nil {
		cfg.Impersonate = func(h http.Handler) http.Handler { return authorize.Impersonate(h, az) }
	}
	srv := httptest.NewServer(filters.Chain(ts.api.Handler(), cfg))
	t.Cleanup(srv.Close)
	return &reviewServer{testServer: ts, url: srv.URL}
}

func (rs *reviewServer) clientFor(t *testing.T, token string, impersonate rest.ImpersonationConfig) kubernetes.Interface {
	t.Helper()
	return kubernetes.NewForConfigOrDie(&rest.Config{Host: rs.url, BearerToken: token, QPS: -1, Impersonate: impersonate})
}

func TestSelfSubjectAccessReview(t *testing.T) {
	rs := newReviewServer(t, reviewPolicy)
	alice := rs.clientFor(t, "alice-token", rest.ImpersonationConfig{})
	for _, tc := range []struct {
		name string
		spec authorizationv1.SelfSubjectAccessReviewSpec
		want authorizationv1.SubjectAccessReviewStatus
	}{
		{name: "allowed by a role binding",
			spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &authorizationv1.ResourceAttributes{
				Namespace: "team", Verb: "create", Resource: "configmaps"}},
			want: authorizationv1.SubjectAccessReviewStatus{Allowed: true,
				Reason: `RBAC: allowed by RoleBinding "alice-editor/team" of Role "editor" to User "alice"`}},
		{name: "a verb the role lacks",
			spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &authorizationv1.ResourceAttributes{
				Namespace: "team", Verb: "delete", Resource: "configmaps"}}},
		{name: "another namespace",
			spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &authorizationv1.ResourceAttributes{
				Namespace: "other", Verb: "create", Resource: "configmaps"}}},
		{name: "a path",
			spec: authorizationv1.SelfSubjectAccessReviewSpec{NonResourceAttributes: &authorizationv1.NonResourceAttributes{
				Path: "/healthz", Verb: "get"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, dryRun := range [][]string{nil, {metav1.DryRunAll}} {
				out, err := alice.AuthorizationV1().SelfSubjectAccessReviews().Create(context.Background(),
					&authorizationv1.SelfSubjectAccessReview{Spec: tc.spec}, metav1.CreateOptions{DryRun: dryRun})
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(tc.want, out.Status); diff != "" {
					t.Errorf("dryRun %v: status (-want +got):\n%s", dryRun, diff)
				}
				if diff := cmp.Diff(tc.spec, out.Spec); diff != "" {
					t.Errorf("dryRun %v: spec (-sent +got):\n%s", dryRun, diff)
				}
				if m := out.ManagedFields; len(m) != 1 || m[0].Manager != "apiserver.test" || m[0].Operation != metav1.ManagedFieldsOperationUpdate {
					t.Errorf("managedFields = %+v, want one Update entry of apiserver.test", m)
				}
			}
		})
	}
}

func TestSubjectAccessReview(t *testing.T) {
	rs := newReviewServer(t, reviewPolicy)
	bob := rs.clientFor(t, "bob-token", rest.ImpersonationConfig{})
	listPods := &authorizationv1.ResourceAttributes{Namespace: "x", Verb: "list", Resource: "pods"}
	byReaders := authorizationv1.SubjectAccessReviewStatus{Allowed: true,
		Reason: `RBAC: allowed by ClusterRoleBinding "readers" of ClusterRole "pod-reader" to Group "readers"`}
	for _, tc := range []struct {
		name string
		spec authorizationv1.SubjectAccessReviewSpec
		want authorizationv1.SubjectAccessReviewStatus
		err  *statusWant
	}{
		{name: "another user in a bound group",
			spec: authorizationv1.SubjectAccessReviewSpec{User: "dave", Groups: []string{"readers"}, ResourceAttributes: listPods},
			want: byReaders},
		{name: "a group alone", spec: authorizationv1.SubjectAccessReviewSpec{Groups: []string{"readers"}, ResourceAttributes: listPods},
			want: byReaders},
		{name: "a user without the group", spec: authorizationv1.SubjectAccessReviewSpec{User: "dave", ResourceAttributes: listPods}},
		{name: "the role binding of another user",
			spec: authorizationv1.SubjectAccessReviewSpec{User: "alice", ResourceAttributes: &authorizationv1.ResourceAttributes{
				Namespace: "team", Verb: "get", Resource: "configmaps", Name: "settings"}},
			want: authorizationv1.SubjectAccessReviewStatus{Allowed: true,
				Reason: `RBAC: allowed by RoleBinding "alice-editor/team" of Role "editor" to User "alice"`}},
		{name: "neither user nor group", spec: authorizationv1.SubjectAccessReviewSpec{ResourceAttributes: listPods},
			err: &statusWant{code: 422, reason: metav1.StatusReasonInvalid,
				message: `.authorization.k8s.io "" is invalid: spec.user: Invalid value: "": at least one of user or group must be specified`}},
		{name: "neither resource nor path", spec: authorizationv1.SubjectAccessReviewSpec{User: "dave"},
			err: &statusWant{code: 422, reason: metav1.StatusReasonInvalid,
				message: `.authorization.k8s.io "" is invalid: spec: Invalid value: null: exactly one of nonResourceAttributes or resourceAttributes must be specified`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := bob.AuthorizationV1().SubjectAccessReviews().Create(context.Background(),
				&authorizationv1.SubjectAccessReview{Spec: tc.spec}, metav1.CreateOptions{})
			if !answered(t, err, tc.err) {
				return
			}
			if diff := cmp.Diff(tc.want, out.Status); diff != "" {
				t.Errorf("status (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLocalSubjectAccessReview(t *testing.T) {
	rs := newReviewServer(t, reviewPolicy)
	bob := rs.clientFor(t, "bob-token", rest.ImpersonationConfig{})
	for _, tc := range []struct {
		name          string
		metaNamespace string
		attrs         authorizationv1.ResourceAttributes
		want          authorizationv1.SubjectAccessReviewStatus
		err           *statusWant
	}{
		{name: "allowed in the namespace", attrs: authorizationv1.ResourceAttributes{Namespace: "team", Verb: "create", Resource: "configmaps"},
			want: authorizationv1.SubjectAccessReviewStatus{Allowed: true,
				Reason: `RBAC: allowed by RoleBinding "alice-editor/team" of Role "editor" to User "alice"`}},
		{name: "not allowed", attrs: authorizationv1.ResourceAttributes{Namespace: "team", Verb: "delete", Resource: "configmaps"}},
		{name: "attributes of another namespace", attrs: authorizationv1.ResourceAttributes{Namespace: "other", Verb: "get", Resource: "configmaps"},
			err: &statusWant{code: 422, reason: metav1.StatusReasonInvalid,
				message: `.authorization.k8s.io "" is invalid: spec.resourceAttributes.namespace: Invalid value: "other": must match metadata.namespace`}},
		{name: "metadata of another namespace", metaNamespace: "other",
			attrs: authorizationv1.ResourceAttributes{Namespace: "team", Verb: "get", Resource: "configmaps"},
			err: &statusWant{code: 400, reason: metav1.StatusReasonBadRequest,
				message: "the namespace of the provided object does not match the namespace sent on the request"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			review := &authorizationv1.LocalSubjectAccessReview{ObjectMeta: metav1.ObjectMeta{Namespace: tc.metaNamespace},
				Spec: authorizationv1.SubjectAccessReviewSpec{User: "alice", ResourceAttributes: &tc.attrs}}
			out, err := bob.AuthorizationV1().LocalSubjectAccessReviews("team").Create(context.Background(), review, metav1.CreateOptions{})
			if !answered(t, err, tc.err) {
				return
			}
			if diff := cmp.Diff(tc.want, out.Status); diff != "" {
				t.Errorf("status (-want +got):\n%s", diff)
			}
			if out.Namespace != "team" {
				t.Errorf("namespace = %q, want team", out.Namespace)
			}
		})
	}
}

func TestSelfSubjectRulesReview(t *testing.T) {
	for _, tc := range []struct {
		name      string
		policy    []runtime.Object
		namespace string
		status    string // the answer's status, as JSON
		err       *statusWant
	}{
		{name: "the rules of a role binding", policy: reviewPolicy, namespace: "team",
			status: `{"resourceRules":[{"verbs":["create","get"],"apiGroups":[""],"resources":["configmaps"]}],"nonResourceRules":[],"incomplete":false}`},
		{name: "no rules in another namespace", policy: reviewPolicy, namespace: "other",
			status: `{"resourceRules":[],"nonResourceRules":[],"incomplete":false}`},
		{name: "everything without an authorizer", namespace: "team",
			status: `{"resourceRules":[{"verbs":["*"],"apiGroups":["*"],"resources":["*"]}],"nonResourceRules":[{"verbs":["*"],"nonResourceURLs":["*"]}],"incomplete":false}`},
		{name: "no namespace", policy: reviewPolicy,
			err: &statusWant{code: 400, reason: metav1.StatusReasonBadRequest, message: "no namespace on request"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rs := newReviewServer(t, tc.policy)
			alice := rs.clientFor(t, "alice-token", rest.ImpersonationConfig{})
			if tc.err != nil {
				_, err := alice.AuthorizationV1().SelfSubjectRulesReviews().Create(context.Background(),
					&authorizationv1.SelfSubjectRulesReview{}, metav1.CreateOptions{})
				checkStatusErr(t, err, *tc.err)
				return
			}
			body := `{"apiVersion":"authorization.k8s.io/v1","kind":"SelfSubjectRulesReview","spec":{"namespace":"` + tc.namespace + `"}}`
			raw, err := alice.AuthorizationV1().RESTClient().Post().Resource("selfsubjectrulesreviews").
				Body([]byte(body)).SetHeader("Content-Type", "application/json").DoRaw(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			// Compared as JSON values: strata writes keys in order.
			var got struct{ Status any }
			var want any
			if err := json.Unmarshal(raw, &got); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal([]byte(tc.status), &want); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got.Status); diff != "" {
				t.Errorf("status (-want +got):\n%s", diff)
			}
		})
	}
}

// answered checks a review's create against the refusal wantErr names,
// or against none; it says whether there is an answer to check further.
func answered(t *testing.T, err error, wantErr *statusWant) bool {
	t.Helper()
	if wantErr != nil {
		checkStatusErr(t, err, *wantErr)
		return false
	}
	if err != nil {
		t.Fatal(err)
	}
	return true
}
