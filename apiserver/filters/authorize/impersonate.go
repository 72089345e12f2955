package authorize

// Impersonation (this file): requests that carry Impersonate-User,
// Impersonate-Uid, Impersonate-Group or Impersonate-Extra-* headers act as
// the user they name, once the authorizer allows the requester to
// impersonate each of them. The authorization filter of this package
// decides what the impersonated user may then do.
//
// (Not a package doc comment: the package's doc.go, with the authorization
// filter, carries it; merge this paragraph into it.)

import (
	"net/http"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/endpoints/filters/impersonation"
	"k8s.io/apiserver/pkg/endpoints/request"
)

// Impersonate wraps next in kube-apiserver v1.37's impersonation filter:
// with its default feature gates (ConstrainedImpersonation, beta and on
// since v1.36) that is upstream's WithConstrainedImpersonation, which
// tries the constrained modes (impersonate:associated-node,
// impersonate:arbitrary-node, impersonate:serviceaccount,
// impersonate:user-info with impersonate-on:<mode>:<verb>) and then the
// legacy "impersonate" verb on users, groups, serviceaccounts, uids and
// userextras. Its refusals are kube-apiserver's: 403 naming the first
// check that failed, 400 for groups, a uid or extras without a user name.
// The requester comes from the context (request.UserFrom): Impersonate
// belongs just inside authentication.
func Impersonate(next http.Handler, a authorizer.Authorizer) http.Handler {
	return withRequestInfo(impersonation.WithConstrainedImpersonation(next, a, statusCodecs))
}

// withRequestInfo makes sure the impersonation filter finds the
// request's RequestInfo, which the chain's outermost filter puts in the
// context when the path parses. kube-apiserver answers 500 to a request
// whose path it cannot parse before impersonation is even considered;
// strata's chain serves it as a non-resource request, and so is it
// impersonated here.
func withRequestInfo(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, ok := request.RequestInfoFrom(r.Context()); !ok {
			info, err := requestInfoFactory.NewRequestInfo(r)
			if err != nil {
				info = &request.RequestInfo{Verb: strings.ToLower(r.Method), Path: r.URL.Path}
			}
			r = r.WithContext(request.WithRequestInfo(r.Context(), info))
		}
		next.ServeHTTP(w, r)
	})
}

// requestInfoFactory parses paths as kube-apiserver does.
var requestInfoFactory = &request.RequestInfoFactory{
	APIPrefixes:          sets.NewString("api", "apis"),
	GrouplessAPIPrefixes: sets.NewString("api"),
}

// statusCodecs encode the filter's errors: a metav1.Status, in JSON, YAML
// or protobuf as the request accepts, as kube-apiserver's codecs do.
var statusCodecs = func() serializer.CodecFactory {
	scheme := runtime.NewScheme()
	metav1.AddToGroupVersion(scheme, schema.GroupVersion{Version: "v1"})
	return serializer.NewCodecFactory(scheme)
}()
