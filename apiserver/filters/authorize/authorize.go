// Package authorize is the authorization filter of the chain (plugged in
// as filters.Config.Authorize): kube-apiserver's own
// (k8s.io/apiserver/pkg/endpoints/filters.WithAuthorization), which asks
// the authorizer with the attributes of the request (GetAuthorizerAttributes:
// the user, the RequestInfo's verb, group, version, resource, subresource,
// namespace, name and path, and the parsed field and label selectors) and
// answers the requests it does not allow 403 with kube-apiserver's Status
// (`secrets is forbidden: User "alice" cannot list resource "secrets" in
// API group "" in the namespace "default"`), JSON or protobuf as the
// client accepts; an authorizer error without a decision is its plain-text
// 500.
//
// The package links kube-apiserver's generic filters: scripts/test.sh
// counts it heavy (no race build).
package authorize

import (
	"net/http"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	genericfilters "k8s.io/apiserver/pkg/endpoints/filters"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
)

// codecs write the 403 and 500 Statuses.
var codecs = serializer.NewCodecFactory(func() *runtime.Scheme {
	s := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(s)
	return s
}())

// New returns the filter asking a.
func New(a authorizer.Authorizer) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return genericfilters.WithAuthorization(next, a, codecs)
	}
}
