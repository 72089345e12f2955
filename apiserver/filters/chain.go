package filters

import (
	"log/slog"
	"net/http"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/endpoints/responsewriter"
)

// Defaults of kube-apiserver's --max-requests-inflight and
// --max-mutating-requests-inflight.
const (
	DefaultMaxRequestsInFlight         = 400
	DefaultMaxMutatingRequestsInFlight = 200
)

// MetricsPath is where Chain serves the metrics, behind authentication.
const MetricsPath = "/metrics"

// Config configures Chain.
type Config struct {
	// MaxRequestsInFlight and MaxMutatingRequestsInFlight bound the
	// read-only and the mutating requests served at once; 0 is unlimited.
	// Long-running requests (watches) are not counted.
	MaxRequestsInFlight, MaxMutatingRequestsInFlight int
	// Authenticate wraps a handler in authentication: it answers the
	// requests it refuses and passes the others on with the user in the
	// context (request.WithUser). nil serves every request anonymously.
	Authenticate func(http.Handler) http.Handler
	// Audit wraps a handler in the audit log (package audit), just inside
	// authentication and outside impersonation, where kube-apiserver puts
	// it; nil logs nothing.
	Audit func(http.Handler) http.Handler
	// Impersonate wraps a handler in impersonation (Impersonate-* headers,
	// checked with the "impersonate" verb), just inside authentication and
	// before the in-flight limits, where kube-apiserver puts it; nil
	// impersonates nobody.
	Impersonate func(http.Handler) http.Handler
	// Authorize wraps the API in authorization: it answers 403 to the
	// requests the authorizer does not allow; innermost, as in
	// kube-apiserver. nil allows every authenticated request.
	Authorize func(http.Handler) http.Handler
	// KnownResource says whether a resource (and subresource, "" for
	// none) is served; others are counted without group, version,
	// resource and subresource labels, so that requests for made-up
	// paths cannot add series. nil takes every resource as known.
	KnownResource func(gvr schema.GroupVersionResource, subresource string) bool
	// Metrics receive the measurements and are served at MetricsPath;
	// nil is Default().
	Metrics *Metrics
	// Logger receives a line per request and panics; nil discards them.
	Logger *slog.Logger
	// Bound wraps a handler in the request timeout (package timeout,
	// kube-apiserver's --request-timeout), inside panic recovery and
	// outside authentication, where kube-apiserver puts it; nil bounds
	// nothing.
	Bound func(http.Handler) http.Handler
}

// Chain wraps api, the API handler, in kube-apiserver's filters (see the
// package documentation for the order) and serves the metrics at
// MetricsPath.
func Chain(api http.Handler, cfg Config) http.Handler {
	if cfg.Metrics == nil {
		cfg.Metrics = Default()
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	metrics := cfg.Metrics.Handler()
	var h http.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == MetricsPath {
			metrics.ServeHTTP(w, r)
			return
		}
		api.ServeHTTP(w, r)
	})
	if cfg.Authorize != nil {
		h = cfg.Authorize(h)
	}
	h = limitInFlight(h, newPool(cfg.MaxRequestsInFlight), newPool(cfg.MaxMutatingRequestsInFlight), cfg.Metrics)
	h = captureUser(h)
	if cfg.Impersonate != nil {
		h = cfg.Impersonate(h)
	}
	if cfg.Audit != nil {
		h = cfg.Audit(h)
	}
	if cfg.Authenticate != nil {
		h = cfg.Authenticate(h)
	}
	if cfg.Bound != nil {
		h = cfg.Bound(h)
	}
	h = recoverPanics(h, cfg.Logger)
	return observe(h, cfg)
}

// observe is the outermost filter: it puts the RequestInfo (when the path
// parses; the API handler reuses it), the received timestamp and the
// request's state in the context, and when the request
// ends records it in the metrics and the log. A request that ends in a
// panic (http.ErrAbortHandler by then) is recorded as aborted and the
// panic goes on.
func observe(next http.Handler, cfg Config) http.Handler {
	m, log := cfg.Metrics, cfg.Logger
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		GrowStack()
		info, parsed := requestInfo(r)
		st := &state{start: m.now(), info: info, labels: requestLabels(r, info, cfg.KnownResource),
			userAgent: r.UserAgent(), w: &recorder{ResponseWriter: w}}
		ctx := r.Context()
		if parsed {
			ctx = request.WithRequestInfo(ctx, info)
		}
		ctx = request.WithReceivedTimestamp(ctx, st.start)
		r = r.WithContext(withState(ctx, st))
		if IsLongRunning(info) {
			g := m.longRunningGauge(st.labels)
			g.Inc()
			defer g.Dec()
		}
		completed := false
		defer func() {
			if !completed {
				m.aborted(st.labels)
				logRequest(log, r, st, m.now().Sub(st.start), true)
			}
		}()
		next.ServeHTTP(responsewriter.WrapForHTTP1Or2(st.w), r)
		completed = true
		elapsed := m.now().Sub(st.start)
		m.observeRequest(st.labels, st.w.code(), elapsed)
		logRequest(log, r, st, elapsed, false)
	})
}

// captureUser, inside authentication, hands the user to observe for the
// log line.
func captureUser(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, ok := request.UserFrom(r.Context()); ok {
			stateFrom(r.Context()).user.Store(&u)
		}
		next.ServeHTTP(w, r)
	})
}
