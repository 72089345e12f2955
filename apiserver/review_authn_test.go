package apiserver

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

func TestSelfSubjectReview(t *testing.T) {
	rs := newReviewServer(t, reviewPolicy)
	for _, tc := range []struct {
		name  string
		token string
		as    rest.ImpersonationConfig
		want  authenticationv1.UserInfo
		err   *statusWant
	}{
		{name: "the token's user", token: "alice-token",
			want: authenticationv1.UserInfo{Username: "alice", UID: "alice-uid", Groups: []string{"devs", "system:authenticated"},
				Extra: map[string]authenticationv1.ExtraValue{"example.com/team": {"blue"}}}},
		{name: "impersonating a user with groups and extra", token: "carol-token",
			as: rest.ImpersonationConfig{UserName: "dave", Groups: []string{"readers"}, Extra: map[string][]string{"scopes": {"view"}}},
			want: authenticationv1.UserInfo{Username: "dave", Groups: []string{"readers", "system:authenticated"},
				Extra: map[string]authenticationv1.ExtraValue{"scopes": {"view"}}}},
		{name: "impersonating a user alone", token: "carol-token", as: rest.ImpersonationConfig{UserName: "dave"},
			want: authenticationv1.UserInfo{Username: "dave", Groups: []string{"system:authenticated"}}},
		// kube-apiserver v1.37 impersonates with ConstrainedImpersonation
		// (on by default): the first refusal it reports is that of the
		// user-info mode, for the request being made.
		{name: "impersonation refused", token: "alice-token", as: rest.ImpersonationConfig{UserName: "bob"},
			err: &statusWant{code: 403, reason: metav1.StatusReasonForbidden,
				message: `selfsubjectreviews.authentication.k8s.io is forbidden: User "alice" cannot impersonate-on:user-info:create resource "selfsubjectreviews" in API group "authentication.k8s.io" at the cluster scope`}},
		// ... unless the mode that last let this requester make this
		// request is another: upstream tries that one first (carol's
		// impersonations above went through the legacy verb).
		{name: "an extra carol may not impersonate", token: "carol-token",
			as: rest.ImpersonationConfig{UserName: "dave", Extra: map[string][]string{"reason": {"audit"}}},
			err: &statusWant{code: 403, reason: metav1.StatusReasonForbidden,
				message: `userextras.authentication.k8s.io "audit" is forbidden: User "carol" cannot impersonate resource "userextras/reason" in API group "authentication.k8s.io" at the cluster scope`}},
		{name: "a group without a user", token: "carol-token", as: rest.ImpersonationConfig{Groups: []string{"readers"}},
			err: &statusWant{code: 400, reason: metav1.StatusReasonBadRequest,
				message: `requested &user.DefaultInfo{Name:"", UID:"", Groups:[]string{"readers"}, Extra:map[string][]string(nil)} without impersonating a user name`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := rs.clientFor(t, tc.token, tc.as)
			out, err := c.AuthenticationV1().SelfSubjectReviews().Create(context.Background(), &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
			if !answered(t, err, tc.err) {
				return
			}
			if diff := cmp.Diff(tc.want, out.Status.UserInfo); diff != "" {
				t.Errorf("user (-want +got):\n%s", diff)
			}
			if out.CreationTimestamp.IsZero() {
				t.Error("no creationTimestamp")
			}
		})
	}
}

func TestTokenReview(t *testing.T) {
	rs := newReviewServer(t, reviewPolicy)
	bob := rs.clientFor(t, "bob-token", rest.ImpersonationConfig{})
	for _, tc := range []struct {
		name, token string
		want        authenticationv1.TokenReviewStatus
		err         *statusWant
	}{
		{name: "a valid token", token: "alice-token", want: authenticationv1.TokenReviewStatus{Authenticated: true,
			User: authenticationv1.UserInfo{Username: "alice", UID: "alice-uid", Groups: []string{"devs", "system:authenticated"},
				Extra: map[string]authenticationv1.ExtraValue{"example.com/team": {"blue"}}}}},
		{name: "an unknown token", token: "nope", want: authenticationv1.TokenReviewStatus{Error: "invalid bearer token"}},
		{name: "no token", err: &statusWant{code: 400, reason: metav1.StatusReasonBadRequest,
			message: "token is required for TokenReview in authentication"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := bob.AuthenticationV1().TokenReviews().Create(context.Background(),
				&authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: tc.token}}, metav1.CreateOptions{})
			if !answered(t, err, tc.err) {
				return
			}
			if diff := cmp.Diff(tc.want, out.Status); diff != "" {
				t.Errorf("status (-want +got):\n%s", diff)
			}
		})
	}
}

// TestReviewWithoutAuthorizer: with no authorizer (kube-apiserver's
// AlwaysAllow) every access review is allowed, without a reason.
func TestReviewWithoutAuthorizer(t *testing.T) {
	rs := newReviewServer(t, nil)
	bob := rs.clientFor(t, "bob-token", rest.ImpersonationConfig{})
	out, err := bob.AuthorizationV1().SelfSubjectAccessReviews().Create(context.Background(), &authorizationv1.SelfSubjectAccessReview{
		Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: "delete", Resource: "nodes"}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(authorizationv1.SubjectAccessReviewStatus{Allowed: true}, out.Status); diff != "" {
		t.Errorf("status (-want +got):\n%s", diff)
	}
}

// TestReviewVerbs: kube-apiserver registers only POST on a review's
// collection (in a namespace for LocalSubjectAccessReviews).
func TestReviewVerbs(t *testing.T) {
	rs := newReviewServer(t, reviewPolicy)
	rc := rs.clientFor(t, "bob-token", rest.ImpersonationConfig{}).AuthorizationV1().RESTClient()
	notAllowed := statusWant{code: 405, reason: metav1.StatusReasonMethodNotAllowed,
		message: "the server does not allow this method on the requested resource"}
	notFound := statusWant{code: 404, reason: metav1.StatusReasonNotFound, message: "the server could not find the requested resource"}
	const base = "/apis/authorization.k8s.io/v1/"
	for _, tc := range []struct {
		method, path string
		want         statusWant
	}{
		{"GET", base + "selfsubjectaccessreviews", notAllowed},
		{"DELETE", base + "subjectaccessreviews", notAllowed},
		{"PUT", base + "selfsubjectrulesreviews", notAllowed},
		{"GET", base + "namespaces/team/localsubjectaccessreviews", notAllowed},
		{"GET", base + "selfsubjectaccessreviews/x", notFound},
		{"POST", base + "selfsubjectaccessreviews/x", notFound},
		{"POST", base + "localsubjectaccessreviews", notFound},
		{"POST", base + "namespaces/team/selfsubjectaccessreviews", notFound},
		{"WATCH", "/apis/authentication.k8s.io/v1/tokenreviews", notAllowed},
	} {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			req := rc.Verb(tc.method).AbsPath(tc.path).Body([]byte("{}"))
			if tc.method == "WATCH" {
				req = rc.Get().AbsPath(tc.path).Param("watch", "true")
			}
			err := req.Do(context.Background()).Error()
			checkStatusErr(t, err, tc.want)
		})
	}
}

// TestReviewProtobuf: typed clients that speak protobuf get their answer
// in protobuf.
func TestReviewProtobuf(t *testing.T) {
	rs := newReviewServer(t, reviewPolicy)
	c := kubernetes.NewForConfigOrDie(&rest.Config{Host: rs.url, BearerToken: "alice-token", QPS: -1,
		ContentConfig: rest.ContentConfig{ContentType: runtime.ContentTypeProtobuf, AcceptContentTypes: runtime.ContentTypeProtobuf}})
	out, err := c.AuthenticationV1().SelfSubjectReviews().Create(context.Background(), &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if out.Status.UserInfo.Username != "alice" {
		t.Errorf("username = %q, want alice", out.Status.UserInfo.Username)
	}
}

// TestReviewsOpenAPI: /openapi/v2 describes each review as kube-apiserver
// v1.37's document does (k8s.io/kubernetes/api/openapi-spec/swagger.json):
// one POST, its operation ID, action, kind and responses, and the path's
// parameters. (kube-apiserver lists a 401 response in every operation;
// strata's documents list it in none, for every resource alike.)
func TestReviewsOpenAPI(t *testing.T) {
	ts := newTestServer(t)
	res := rawCall(t, ts, "GET", "/openapi/v2", map[string]string{"Accept": "application/json"}, nil)
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(res.body, &doc); res.code != 200 || err != nil {
		t.Fatalf("GET /openapi/v2: %d %v", res.code, err)
	}
	params := "dryRun fieldManager fieldValidation pretty"
	for _, tc := range []struct{ path, id, kind, params string }{
		{"/apis/authentication.k8s.io/v1/selfsubjectreviews", "createAuthenticationV1SelfSubjectReview", "authentication.k8s.io/v1/SelfSubjectReview", params},
		{"/apis/authentication.k8s.io/v1/tokenreviews", "createAuthenticationV1TokenReview", "authentication.k8s.io/v1/TokenReview", params},
		{"/apis/authorization.k8s.io/v1/namespaces/{namespace}/localsubjectaccessreviews", "createAuthorizationV1NamespacedLocalSubjectAccessReview",
			"authorization.k8s.io/v1/LocalSubjectAccessReview", "dryRun fieldManager fieldValidation namespace pretty"},
		{"/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", "createAuthorizationV1SelfSubjectAccessReview", "authorization.k8s.io/v1/SelfSubjectAccessReview", params},
		{"/apis/authorization.k8s.io/v1/selfsubjectrulesreviews", "createAuthorizationV1SelfSubjectRulesReview", "authorization.k8s.io/v1/SelfSubjectRulesReview", params},
		{"/apis/authorization.k8s.io/v1/subjectaccessreviews", "createAuthorizationV1SubjectAccessReview", "authorization.k8s.io/v1/SubjectAccessReview", params},
	} {
		item := doc.Paths[tc.path]
		var methods []string
		for m := range item {
			methods = append(methods, m)
		}
		slices.Sort(methods)
		if !slices.Equal(methods, []string{"parameters", "post"}) {
			t.Errorf("%s: %v, want parameters and post", tc.path, methods)
			continue
		}
		var op struct {
			ID        string                                `json:"operationId"`
			Action    string                                `json:"x-kubernetes-action"`
			GVK       struct{ Group, Version, Kind string } `json:"x-kubernetes-group-version-kind"`
			Responses map[string]json.RawMessage
		}
		var pathParams []struct {
			Name string
			Ref  string `json:"$ref"`
		}
		if err := json.Unmarshal(item["post"], &op); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(item["parameters"], &pathParams); err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, p := range pathParams {
			name := p.Name
			if name == "" { // a shared parameter: #/parameters/<name>-<hash>
				name, _, _ = strings.Cut(strings.TrimPrefix(p.Ref, "#/parameters/"), "-")
			}
			names = append(names, name)
		}
		responses := slices.Sorted(maps.Keys(op.Responses))
		if kind := op.GVK.Group + "/" + op.GVK.Version + "/" + op.GVK.Kind; op.ID != tc.id || op.Action != "post" || kind != tc.kind ||
			strings.Join(names, " ") != tc.params || !slices.Equal(responses, []string{"200", "201", "202"}) {
			t.Errorf("%s: POST %s %s %s, parameters %v, responses %v; want %s post %s, parameters %s",
				tc.path, op.ID, op.Action, kind, names, responses, tc.id, tc.kind, tc.params)
		}
	}
}
