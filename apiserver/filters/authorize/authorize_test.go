package authorize

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/endpoints/request"
)

var infoFactory = &request.RequestInfoFactory{APIPrefixes: sets.NewString("api", "apis"), GrouplessAPIPrefixes: sets.NewString("api")}

// TestNew: allowed requests reach the handler; others are kube-apiserver's
// 403 (with the authorizer's reason) or, for an error without a decision,
// its plain-text 500.
func TestNew(t *testing.T) {
	decide := authorizer.AuthorizerFunc(func(_ context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
		switch a.GetUser().GetName() {
		case "alice":
			return authorizer.DecisionAllow, "", nil
		case "broken":
			return authorizer.DecisionNoOpinion, "", errors.New("no bindings")
		}
		return authorizer.DecisionNoOpinion, "no binding", nil
	})
	h := New(decide)(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "served") }))
	for _, tc := range []struct {
		user, path string
		code       int
		body       string
	}{
		{"alice", "/api/v1/namespaces/default/secrets", 200, "served"},
		{"bob", "/api/v1/namespaces/default/secrets", 403, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",` +
			`"message":"secrets is forbidden: User \"bob\" cannot list resource \"secrets\" in API group \"\" in the namespace \"default\": no binding",` +
			`"reason":"Forbidden","details":{"kind":"secrets"},"code":403}` + "\n"},
		{"bob", "/metrics", 403, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",` +
			`"message":"forbidden: User \"bob\" cannot get path \"/metrics\": no binding","reason":"Forbidden","details":{},"code":403}` + "\n"},
		// responsewriters.InternalError: kube-apiserver's plain-text 500.
		{"broken", "/version", 500, `Internal Server Error: "/version": no bindings` + "\n"},
	} {
		r := httptest.NewRequest(http.MethodGet, tc.path, nil)
		info, err := infoFactory.NewRequestInfo(r)
		if err != nil {
			t.Fatal(err)
		}
		ctx := request.WithRequestInfo(request.WithUser(r.Context(), &user.DefaultInfo{Name: tc.user}), info)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r.WithContext(ctx))
		if w.Code != tc.code || w.Body.String() != tc.body {
			t.Errorf("%s GET %s: %d %s\nwant %d %s", tc.user, tc.path, w.Code, w.Body, tc.code, tc.body)
		}
	}
}
