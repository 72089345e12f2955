package filters

import (
	"net/http"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	genericapifilters "k8s.io/apiserver/pkg/endpoints/filters"
	"k8s.io/apiserver/pkg/endpoints/request"
	genericfilters "k8s.io/apiserver/pkg/server/filters"
)

// DefaultRequestTimeout is kube-apiserver's --request-timeout default.
const DefaultRequestTimeout = time.Minute

// statusCodecs encode the one object the deadline filter answers with, a
// metav1.Status (400 for a malformed ?timeout=).
var statusCodecs = func() serializer.CodecFactory {
	s := runtime.NewScheme()
	metav1.AddToGroupVersion(s, schema.GroupVersion{Version: "v1"})
	return serializer.NewCodecFactory(s)
}()

// withDeadline bounds every request that is not long-running by timeout,
// or by a shorter ?timeout=, with kube-apiserver's own two filters:
// WithRequestDeadline sets the context's deadline (and answers 400 to a
// malformed timeout), and WithTimeoutForNonLongRunningRequests answers 504
// when the handler has not finished by then, so that a stuck storage call
// costs the client at most the timeout. Requests whose path did not parse
// into a RequestInfo (the upstream filters need one) pass through: they
// are answered at once.
func withDeadline(next http.Handler, timeout time.Duration) http.Handler {
	if timeout <= 0 {
		return next
	}
	longRunning := func(_ *http.Request, info *request.RequestInfo) bool { return isLongRunning(info) }
	bounded := genericfilters.WithTimeoutForNonLongRunningRequests(next, longRunning)
	bounded = genericapifilters.WithRequestDeadline(bounded, nil, nil, longRunning, statusCodecs, timeout)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, ok := request.RequestInfoFrom(r.Context()); !ok {
			next.ServeHTTP(w, r)
			return
		}
		bounded.ServeHTTP(w, r)
	})
}
