package apiserver

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	restful "github.com/emicklei/go-restful/v3"
	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/group"
	"k8s.io/apiserver/pkg/authentication/request/bearertoken"
	"k8s.io/apiserver/pkg/authentication/token/tokenfile"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/endpoints"
	"k8s.io/apiserver/pkg/endpoints/handlers/responsewriters"
	"k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	"k8s.io/kubernetes/pkg/registry/authentication/selfsubjectreview"
	"k8s.io/kubernetes/pkg/registry/authentication/tokenreview"
	"k8s.io/kubernetes/pkg/registry/authorization/localsubjectaccessreview"
	"k8s.io/kubernetes/pkg/registry/authorization/selfsubjectaccessreview"
	"k8s.io/kubernetes/pkg/registry/authorization/selfsubjectrulesreview"
	"k8s.io/kubernetes/pkg/registry/authorization/subjectaccessreview"
)

// upstreamReviews serves the reviews with kube-apiserver's own handlers:
// k8s.io/apiserver's route installer over the upstream REST, with the
// scheme and codecs kube-apiserver uses, as user.
func upstreamReviews(t *testing.T, as user.Info) http.Handler {
	t.Helper()
	az := staticRBAC(t, reviewPolicy)
	// kube-apiserver's token file authenticator, wrapped as it wraps it.
	static := map[string]*user.DefaultInfo{}
	for token, u := range reviewUsers {
		static[token] = u.(*user.DefaultInfo)
	}
	tokens := group.NewAuthenticatedGroupAdder(bearertoken.New(
		authenticator.WrapAudienceAgnosticToken(nil, tokenfile.New(static))))
	container := restful.NewContainer()
	for gv, storage := range map[schema.GroupVersion]map[string]rest.Storage{
		{Group: "authentication.k8s.io", Version: "v1"}: {
			"selfsubjectreviews": selfsubjectreview.NewREST(),
			"tokenreviews":       tokenreview.NewREST(tokens, authenticator.Audiences(nil)),
		},
		{Group: "authorization.k8s.io", Version: "v1"}: {
			"subjectaccessreviews":      subjectaccessreview.NewREST(az, legacyscheme.Scheme),
			"selfsubjectaccessreviews":  selfsubjectaccessreview.NewREST(az, legacyscheme.Scheme),
			"localsubjectaccessreviews": localsubjectaccessreview.NewREST(az, legacyscheme.Scheme),
			"selfsubjectrulesreviews":   selfsubjectrulesreview.NewREST(az),
		},
	} {
		group := &endpoints.APIGroupVersion{Storage: storage, Root: "/apis", GroupVersion: gv,
			OptionsExternalVersion: &schema.GroupVersion{Version: "v1"},
			Serializer:             legacyscheme.Codecs, ParameterCodec: legacyscheme.ParameterCodec,
			Typer: legacyscheme.Scheme, Creater: legacyscheme.Scheme, Convertor: legacyscheme.Scheme,
			ConvertabilityChecker: legacyscheme.Scheme, Defaulter: legacyscheme.Scheme, Namer: meta.NewAccessor(),
			UnsafeConvertor: runtime.UnsafeObjectConvertor(legacyscheme.Scheme), TypeConverter: managedfields.NewDeducedTypeConverter(),
			EquivalentResourceRegistry: runtime.NewEquivalentResourceRegistry(), MaxRequestBodyBytes: DefaultMaxRequestBodyBytes}
		if _, _, err := group.InstallREST(container); err != nil {
			t.Fatal(err)
		}
	}
	// As kube-apiserver's handler (k8s.io/apiserver/pkg/server) answers
	// what go-restful routes nowhere.
	container.ServiceErrorHandler(func(se restful.ServiceError, req *restful.Request, resp *restful.Response) {
		responsewriters.ErrorNegotiated(apierrors.NewGenericServerResponse(se.Code, "", schema.GroupResource{}, "", se.Message, 0, false),
			legacyscheme.Codecs, schema.GroupVersion{}, resp, req.Request)
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := request.WithUser(r.Context(), as)
		if info, err := requestInfoFactory.NewRequestInfo(r); err == nil {
			ctx = request.WithRequestInfo(ctx, info)
		}
		container.ServeHTTP(w, r.WithContext(ctx))
	})
}

// TestReviewsMatchUpstreamHandler sends the same review bodies to strata
// and to kube-apiserver's handlers (upstreamReviews) and compares the
// answers: status code, and the Status of a failure or the spec and
// status of an answer.
func TestReviewsMatchUpstreamHandler(t *testing.T) {
	rs := newReviewServer(t, reviewPolicy)
	alice := &user.DefaultInfo{Name: "alice", UID: "alice-uid", Groups: []string{"devs", user.AllAuthenticated},
		Extra: map[string][]string{"example.com/team": {"blue"}}}
	upstream := httptest.NewServer(upstreamReviews(t, alice))
	t.Cleanup(upstream.Close)
	const authz, authn = "/apis/authorization.k8s.io/v1/", "/apis/authentication.k8s.io/v1/"
	for _, tc := range []struct{ name, path, body string }{
		{"GET of a collection", "GET " + authz + "selfsubjectaccessreviews", ""},
		{"DELETE of a collection", "DELETE " + authn + "tokenreviews", ""},
		{"GET of a name", "GET " + authz + "subjectaccessreviews/x", ""},
		{"POST to a name", authz + "selfsubjectrulesreviews/x", "{}"},
		{"self access allowed", authz + "selfsubjectaccessreviews",
			`{"kind":"SelfSubjectAccessReview","apiVersion":"authorization.k8s.io/v1","spec":{"resourceAttributes":{"namespace":"team","verb":"create","resource":"configmaps"}}}`},
		{"self access with a name", authz + "selfsubjectaccessreviews",
			`{"kind":"SelfSubjectAccessReview","apiVersion":"authorization.k8s.io/v1","metadata":{"name":"x"},"spec":{"resourceAttributes":{"verb":"get","resource":"pods"}}}`},
		{"self access with both attributes", authz + "selfsubjectaccessreviews",
			`{"kind":"SelfSubjectAccessReview","apiVersion":"authorization.k8s.io/v1","spec":{"resourceAttributes":{"verb":"get"},"nonResourceAttributes":{"path":"/x","verb":"get"}}}`},
		{"access without user or group", authz + "subjectaccessreviews",
			`{"kind":"SubjectAccessReview","apiVersion":"authorization.k8s.io/v1","spec":{"resourceAttributes":{"verb":"get","resource":"pods"}}}`},
		{"access without attributes", authz + "subjectaccessreviews",
			`{"kind":"SubjectAccessReview","apiVersion":"authorization.k8s.io/v1","spec":{"user":"dave"}}`},
		{"access of a group", authz + "subjectaccessreviews",
			`{"kind":"SubjectAccessReview","apiVersion":"authorization.k8s.io/v1","spec":{"groups":["readers"],"resourceAttributes":{"verb":"list","resource":"pods"}}}`},
		{"access with an unknown field, strict", authz + "subjectaccessreviews?fieldValidation=Strict",
			`{"kind":"SubjectAccessReview","apiVersion":"authorization.k8s.io/v1","spec":{"user":"dave","color":"red","resourceAttributes":{"verb":"get"}}}`},
		{"access with a bad label selector", authz + "subjectaccessreviews",
			`{"kind":"SubjectAccessReview","apiVersion":"authorization.k8s.io/v1","spec":{"user":"dave","resourceAttributes":{"verb":"list","resource":"pods","labelSelector":{"requirements":[{"key":"a","operator":"In"}]}}}}`},
		{"another kind", authz + "subjectaccessreviews", `{"kind":"TokenReview","apiVersion":"authentication.k8s.io/v1","spec":{}}`},
		{"local access allowed", authz + "namespaces/team/localsubjectaccessreviews",
			`{"kind":"LocalSubjectAccessReview","apiVersion":"authorization.k8s.io/v1","spec":{"user":"alice","resourceAttributes":{"namespace":"team","verb":"get","resource":"configmaps"}}}`},
		{"local access of another namespace", authz + "namespaces/team/localsubjectaccessreviews",
			`{"kind":"LocalSubjectAccessReview","apiVersion":"authorization.k8s.io/v1","spec":{"user":"alice","resourceAttributes":{"namespace":"other","verb":"get"}}}`},
		{"local access in other metadata", authz + "namespaces/team/localsubjectaccessreviews",
			`{"kind":"LocalSubjectAccessReview","apiVersion":"authorization.k8s.io/v1","metadata":{"namespace":"other"},"spec":{"user":"alice","resourceAttributes":{"namespace":"other","verb":"get"}}}`},
		{"local access of a path", authz + "namespaces/team/localsubjectaccessreviews",
			`{"kind":"LocalSubjectAccessReview","apiVersion":"authorization.k8s.io/v1","spec":{"user":"alice","nonResourceAttributes":{"path":"/x","verb":"get"}}}`},
		{"rules", authz + "selfsubjectrulesreviews",
			`{"kind":"SelfSubjectRulesReview","apiVersion":"authorization.k8s.io/v1","spec":{"namespace":"team"}}`},
		{"rules without a namespace", authz + "selfsubjectrulesreviews", `{"kind":"SelfSubjectRulesReview","apiVersion":"authorization.k8s.io/v1","spec":{}}`},
		{"self", authn + "selfsubjectreviews", `{"kind":"SelfSubjectReview","apiVersion":"authentication.k8s.io/v1"}`},
		{"a valid token", authn + "tokenreviews", `{"kind":"TokenReview","apiVersion":"authentication.k8s.io/v1","spec":{"token":"alice-token"}}`},
		{"an unknown token", authn + "tokenreviews", `{"kind":"TokenReview","apiVersion":"authentication.k8s.io/v1","spec":{"token":"nope"}}`},
		{"a valid token for an audience", authn + "tokenreviews",
			`{"kind":"TokenReview","apiVersion":"authentication.k8s.io/v1","spec":{"token":"alice-token","audiences":["vault"]}}`},
		{"a token with a space", authn + "tokenreviews", `{"kind":"TokenReview","apiVersion":"authentication.k8s.io/v1","spec":{"token":"alice-token x"}}`},
		{"no token", authn + "tokenreviews", `{"kind":"TokenReview","apiVersion":"authentication.k8s.io/v1","spec":{}}`},
		{"not JSON", authn + "tokenreviews", `{"kind":`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			method, path, found := strings.Cut(tc.path, " ")
			if !found {
				method, path = http.MethodPost, tc.path
			}
			wantCode, want := send(t, method, upstream.URL+path, "", tc.body)
			gotCode, got := send(t, method, rs.url+path, "alice-token", tc.body)
			if gotCode != wantCode {
				t.Errorf("code %d, upstream %d", gotCode, wantCode)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("answer (-upstream +strata):\n%s", diff)
			}
		})
	}
}

// send sends body as JSON and returns the answer's code and what is
// compared of it: a Status's reason, message, details and code; an
// object's spec and status.
func send(t *testing.T, method, url, token, body string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(method, url, bytes.NewReader([]byte(body)))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	data, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	var obj map[string]any
	if err := json.Unmarshal(data, &obj); err != nil {
		t.Fatalf("%s: %d %s", url, res.StatusCode, data)
	}
	keep := []string{"spec", "status"}
	if obj["kind"] == "Status" {
		keep = []string{"reason", "message", "details", "code"}
	}
	out := map[string]any{}
	for _, k := range keep {
		if v, ok := obj[k]; ok {
			out[k] = v
		}
	}
	return res.StatusCode, out
}
