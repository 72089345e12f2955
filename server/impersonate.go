package server

import (
	"net/http"

	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/authorization/authorizerfactory"

	"github.com/stratadev/strata/apiserver/filters/authorize"
)

// serverAuthorizer is the authorizer the server's own checks consult
// (impersonation, the access reviews): every authenticated user may do
// everything until RBAC is wired, which replaces this one line.
func serverAuthorizer() authorizer.Authorizer { return authorizerfactory.NewAlwaysAllowAuthorizer() }

// impersonate is the filter chain's impersonation step, checked with a;
// none where requests are not authenticated (plain HTTP), as
// kube-apiserver's old insecure port had none.
func impersonate(authenticate func(http.Handler) http.Handler, a authorizer.Authorizer) func(http.Handler) http.Handler {
	if authenticate == nil {
		return nil
	}
	return func(next http.Handler) http.Handler { return authorize.Impersonate(next, a) }
}
