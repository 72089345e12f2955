// Package timeout bounds the requests that are not long-running as
// kube-apiserver's --request-timeout does, with kube-apiserver's own
// filters: WithRequestDeadline sets the context's deadline (--request-timeout
// or a shorter ?timeout=; 400 for a malformed one) and WithTimeout, as
// WithTimeoutForNonLongRunningRequests sets it up, answers 504 when the
// handler has not finished by then. It is a package of its own because
// those filters link much of k8s.io/apiserver, which the filter chain's
// own package (tested under the race detector) does without;
// filters.Config.Bound plugs it in.
package timeout

import (
	"net/http"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	genericapifilters "k8s.io/apiserver/pkg/endpoints/filters"
	"k8s.io/apiserver/pkg/endpoints/metrics"
	"k8s.io/apiserver/pkg/endpoints/request"
	genericfilters "k8s.io/apiserver/pkg/server/filters"

	"github.com/stratadev/strata/apiserver/filters"
)

// Default is kube-apiserver's --request-timeout default.
const Default = time.Minute

// statusCodecs encode the one object the deadline filter answers with, a
// metav1.Status (400 for a malformed ?timeout=).
var statusCodecs = func() serializer.CodecFactory {
	s := runtime.NewScheme()
	metav1.AddToGroupVersion(s, schema.GroupVersion{Version: "v1"})
	return serializer.NewCodecFactory(s)
}()

// Bound wraps next so that every request that is not long-running ends by
// timeout, or by a shorter ?timeout=: kube-apiserver's 504 "Timeout:
// request did not complete within the allotted timeout" after it, so that
// a stuck call costs the client at most the timeout. 0 bounds nothing.
// Requests whose path did not parse into a RequestInfo (the upstream
// filters need one) pass through: they are answered at once.
func Bound(next http.Handler, timeout time.Duration) http.Handler {
	if timeout <= 0 {
		return next
	}
	longRunning := func(_ *http.Request, info *request.RequestInfo) bool { return filters.IsLongRunning(info) }
	bounded := withTimeout(bodyDeadline(next), longRunning)
	bounded = genericapifilters.WithRequestDeadline(bounded, nil, nil, longRunning, statusCodecs, timeout)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, ok := request.RequestInfoFrom(r.Context()); !ok {
			next.ServeHTTP(w, r)
			return
		}
		bounded.ServeHTTP(w, r)
	})
}

// errTimeout is the 504 a request that timed out is answered with. It is
// only read, so one serves every request, where upstream's
// WithTimeoutForNonLongRunningRequests formats a new one for each, an
// allocation on every request's path.
var errTimeout = apierrors.NewTimeoutError("request did not complete within the allotted timeout", 0)

// withTimeout is upstream's WithTimeoutForNonLongRunningRequests with
// errTimeout: the handler runs on a goroutine of its own, and the client
// gets the 504 once the request's context is done.
func withTimeout(next http.Handler, longRunning request.LongRunningRequestCheck) http.Handler {
	return genericfilters.WithTimeout(next, func(r *http.Request) (*http.Request, bool, func(), *apierrors.StatusError) {
		info, _ := request.RequestInfoFrom(r.Context()) // Bound passes only requests that have one
		if longRunning(r, info) {
			return r, true, nil, nil
		}
		recordTermination := func() {
			metrics.RecordRequestTermination(r, info, metrics.APIServerComponent, http.StatusGatewayTimeout)
		}
		return r, false, recordTermination, errTimeout
	})
}

// bodyDeadline makes the request's deadline the connection's read
// deadline, so that a client sending its body slowly gets an error at the
// deadline instead of holding the handler, and its in-flight slot, until
// it is done (kube-apiserver's timeout filter answers 504 but leaves the
// handler reading). A writer that cannot set one (a test's) is left alone.
func bodyDeadline(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The deadline filter's goroutine starts here, with a small stack.
		filters.GrowStack()
		if d, ok := r.Context().Deadline(); ok && r.ContentLength != 0 {
			_ = http.NewResponseController(w).SetReadDeadline(d)
		}
		next.ServeHTTP(w, r)
	})
}
