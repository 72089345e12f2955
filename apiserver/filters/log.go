package filters

import (
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"
)

// quietPaths are logged at Debug even when they fail: probes and scrapes
// come every few seconds and say nothing about what clients do.
var quietPaths = []string{"/healthz", "/livez", "/readyz", "/metrics"}

func quiet(path string) bool {
	return slices.ContainsFunc(quietPaths, func(p string) bool { return path == p || strings.HasPrefix(path, p+"/") })
}

// logRequest writes the line of a request that ended, with the keys of
// kube-apiserver's httplog ("HTTP" verb URI latency userAgent srcIP resp)
// and the user. Watches are logged when they end. As kube-apiserver logs
// requests only at -v=3, the line is at Debug (--log-level debug), except
// for a server error or a response cut short: a line for every request
// would cost a visible share of a cheap request's CPU.
func logRequest(log *slog.Logger, r *http.Request, st *state, elapsed time.Duration, aborted bool) {
	level := slog.LevelDebug
	if (aborted || st.w.code() >= http.StatusInternalServerError) && !quiet(r.URL.Path) {
		level = slog.LevelInfo
	}
	ctx := r.Context()
	if !log.Enabled(ctx, level) {
		return
	}
	userName := ""
	if u := st.user.Load(); u != nil {
		userName = (*u).GetName()
	}
	attrs := []slog.Attr{
		slog.String("verb", st.labels.verb),
		slog.String("URI", requestURI(r)),
		slog.Duration("latency", elapsed),
		slog.String("user", userName),
		slog.String("userAgent", st.userAgent),
		slog.String("srcIP", r.RemoteAddr),
		slog.Int("resp", st.w.code()),
	}
	if aborted {
		// The status sent, if any, before the response was cut short.
		attrs[len(attrs)-1] = slog.Int("resp", st.w.status)
		attrs = append(attrs, slog.Bool("aborted", true))
	}
	log.LogAttrs(ctx, level, "HTTP", attrs...)
}
