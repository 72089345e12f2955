package authn

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/request/bearertoken"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/endpoints/request"
)

// FuzzMiddleware sends random Authorization headers (one or two of them)
// through Middleware and compares the outcome with kube-apiserver's
// bearer-token parsing (upstream's bearertoken authenticator over the same
// tokens): a token it accepts names its user, one it refuses is 401, and
// a header it ignores leaves the request without credentials (anonymous
// where allowed, else 401). Never a panic, never another status.
func FuzzMiddleware(f *testing.F) {
	for _, seed := range []struct {
		first, second string
		anonymous     bool
	}{
		{"Bearer good-token", "", false}, {"bearer good-token", "", true}, {"Bearer  good-token", "", true},
		{"Bearer good-token extra", "", false}, {"Bearer", "", true}, {"Basic dXNlcjpwYXNz", "", true},
		{"Bearer nope", "", true}, {"  Bearer good-token  ", "Bearer nope", false}, {"", "", true},
		{"Bearer good-token\x00", "", false}, {"BEARER\tgood-token", "", false}, {"Bearer other-token", "", false},
	} {
		f.Add(seed.first, seed.second, seed.anonymous)
	}
	tokens := map[string]user.Info{
		"good-token":  &user.DefaultInfo{Name: "alice", Groups: []string{"devs"}},
		"other-token": &user.DefaultInfo{Name: "bob"},
	}
	a := &Authenticator{Tokens: tokens}
	upstream := bearertoken.New(authenticator.TokenFunc(func(_ context.Context, token string) (*authenticator.Response, bool, error) {
		if u, ok := tokens[token]; ok {
			return &authenticator.Response{User: u}, true, nil
		}
		return nil, false, nil
	}))
	f.Fuzz(func(t *testing.T, first, second string, anonymous bool) {
		r := httptest.NewRequest(http.MethodGet, "/api", nil)
		r.Header["Authorization"] = []string{first}
		if second != "" {
			r.Header["Authorization"] = append(r.Header["Authorization"], second)
		}
		a.Anonymous = func(*http.Request) bool { return anonymous }
		wantName, wantStatus := expectedOutcome(upstream, r.Clone(r.Context()), anonymous)

		var gotName string
		called := false
		rec := httptest.NewRecorder()
		Middleware(a, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			called = true
			u, ok := request.UserFrom(r.Context())
			if !ok {
				t.Fatal("no user in the context")
			}
			gotName = u.GetName()
			if r.Header.Get("Authorization") != "" && gotName != user.Anonymous {
				t.Errorf("Authorization header kept for %q", gotName)
			}
		})).ServeHTTP(rec, r)
		if rec.Code != wantStatus || (called && gotName != wantName) {
			t.Fatalf("Authorization %q %q (anonymous %v): status %d, user %q; want %d, %q",
				first, second, anonymous, rec.Code, gotName, wantStatus, wantName)
		}
	})
}

// expectedOutcome is what kube-apiserver's token authentication makes of
// r: the user's name and 200, or 401.
func expectedOutcome(upstream *bearertoken.Authenticator, r *http.Request, anonymous bool) (string, int) {
	resp, ok, err := upstream.AuthenticateRequest(r)
	switch {
	case ok:
		return resp.User.GetName(), http.StatusOK
	case err != nil || !anonymous:
		return "", http.StatusUnauthorized
	default:
		return user.Anonymous, http.StatusOK
	}
}
