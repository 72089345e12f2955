// Package filters is the HTTP filter chain kube-apiserver puts around its
// handlers, as strata serves it: request metrics in Prometheus form, limits
// on requests in flight, a log line per request, and panic recovery.
//
// Chain applies the filters in kube-apiserver's order (its
// DefaultBuildHandlerChain), outermost first:
//
//	observe        RequestInfo and received timestamp in the context; when
//	               the request ends, apiserver_request_total and
//	               apiserver_request_duration_seconds, and the log line
//	recover        a panic becomes a 500 and a logged stack
//	bound          Config.Bound: the request timeout (package timeout)
//	authenticate   Config.Authenticate (401s are still observed)
//	audit          Config.Audit
//	impersonate    Config.Impersonate
//	max in flight  429 beyond --max-requests-inflight or
//	               --max-mutating-requests-inflight
//	authorize      Config.Authorize (403)
//	/metrics       the metrics handler; every other path goes to the API
//
// Observation sits outside recovery so that a panic is counted and logged
// as the 500 it becomes; it runs no code that can panic.
//
// Metrics live in a Metrics value with its own registry (never
// prometheus.DefaultRegisterer). The server uses Default(), and the watch
// handler, the storage layer and etcd calls record into it through its
// WatchEventSent, SetStorageObjects and ObserveEtcd methods.
//
// Where strata knowingly differs from kube-apiserver:
//   - apiserver_request_total counts every request the chain sees,
//     including 401s and requests for paths kube-apiserver has no route for
//     (with empty group, version, resource and subresource labels);
//     kube-apiserver counts only requests that reach an API route, the
//     health checks, and 429s. Unknown resources are not used as label
//     values (Config.KnownResource), so that unauthenticated clients cannot
//     grow the label set.
//   - A panic after the response has begun aborts the response
//     (http.ErrAbortHandler) instead of appending a 500 to it.
//   - There is no priority and fairness.
package filters
