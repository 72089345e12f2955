package server

import (
	"maps"
	"net/http"
	"net/http/pprof"
)

// extraHandlers are the paths served besides the API: the service accounts'
// OIDC discovery and, with --profiling, pprof. They pass the same filters as
// the API, so /debug/pprof/ needs a user authorized for that non-resource
// path (system:masters, or cluster-admin), as on kube-apiserver.
func extraHandlers(o *Options, sa *serviceAccounts) map[string]http.Handler {
	h := sa.extraHandlers()
	if o.Profiling {
		maps.Copy(h, profilingHandlers())
	}
	return h
}

// profilingHandlers are net/http/pprof's handlers at the paths
// kube-apiserver serves them at (its routes.Profiling).
func profilingHandlers() map[string]http.Handler {
	return map[string]http.Handler{
		"/debug/pprof":         http.RedirectHandler("/debug/pprof/", http.StatusFound),
		"/debug/pprof/":        http.HandlerFunc(pprof.Index),
		"/debug/pprof/profile": http.HandlerFunc(pprof.Profile),
		"/debug/pprof/symbol":  http.HandlerFunc(pprof.Symbol),
		"/debug/pprof/trace":   http.HandlerFunc(pprof.Trace),
	}
}
