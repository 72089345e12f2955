package server

import (
	"net/http"

	"k8s.io/apiserver/pkg/authorization/authorizer"

	"github.com/stratadev/strata/apiserver/filters/authorize"
)

// impersonate is the filter chain's impersonation step, checked with a;
// none where requests are not authenticated (plain HTTP), as
// kube-apiserver's old insecure port had none.
func impersonate(plainHTTP bool, a authorizer.Authorizer) func(http.Handler) http.Handler {
	if plainHTTP {
		return nil
	}
	return func(next http.Handler) http.Handler { return authorize.Impersonate(next, a) }
}
