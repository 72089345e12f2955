package authn

import (
	"context"
	"reflect"
	"testing"

	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/user"
)

// TestAuthenticateTokenAudiences: TokenReview's view of the tokens. The
// static tokens are for the API's audiences, as kube-apiserver's token
// file is; More's answer keeps its own audiences.
func TestAuthenticateTokenAudiences(t *testing.T) {
	more := authenticator.TokenFunc(func(ctx context.Context, token string) (*authenticator.Response, bool, error) {
		if token != "jwt" {
			return nil, false, nil
		}
		return &authenticator.Response{User: &user.DefaultInfo{Name: "robot"}, Audiences: authenticator.Audiences{"vault"}}, true, nil
	})
	a := &Authenticator{Tokens: map[string]user.Info{"good-token": &user.DefaultInfo{Name: "alice"}}, More: more,
		APIAudiences: authenticator.Audiences{"api"}}
	for _, tc := range []struct {
		name, token string
		audiences   authenticator.Audiences // requested; nil for none
		want        *authenticator.Response
	}{
		{name: "static, no audiences", token: "good-token",
			want: &authenticator.Response{User: &user.DefaultInfo{Name: "alice", Groups: []string{user.AllAuthenticated}}}},
		{name: "static, an API audience", token: "good-token", audiences: authenticator.Audiences{"other", "api"},
			want: &authenticator.Response{User: &user.DefaultInfo{Name: "alice", Groups: []string{user.AllAuthenticated}},
				Audiences: authenticator.Audiences{"api"}}},
		{name: "static, another audience", token: "good-token", audiences: authenticator.Audiences{"vault"}},
		{name: "more, its audiences", token: "jwt", audiences: authenticator.Audiences{"vault"},
			want: &authenticator.Response{User: &user.DefaultInfo{Name: "robot", Groups: []string{user.AllAuthenticated}},
				Audiences: authenticator.Audiences{"vault"}}},
		{name: "unknown", token: "nope"},
		{name: "empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			if tc.audiences != nil {
				ctx = authenticator.WithAudiences(ctx, tc.audiences)
			}
			got, ok, err := a.AuthenticateToken(ctx, tc.token)
			if err != nil || ok != (tc.want != nil) || !reflect.DeepEqual(got, tc.want) {
				t.Errorf("AuthenticateToken = %+v, %v, %v; want %+v", got, ok, err, tc.want)
			}
		})
	}
}
