package filters

import (
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"
)

// quietPaths are logged at Debug: probes and scrapes come every few
// seconds and say nothing about what clients do.
var quietPaths = []string{"/healthz", "/livez", "/readyz", "/metrics"}

func quiet(path string) bool {
	return slices.ContainsFunc(quietPaths, func(p string) bool { return path == p || strings.HasPrefix(path, p+"/") })
}

// logRequest writes the line of a request that ended, with the keys of
// kube-apiserver's httplog ("HTTP" verb URI latency userAgent srcIP resp)
// and the user. Watches are logged when they end.
func logRequest(log *slog.Logger, r *http.Request, st *state, elapsed time.Duration, aborted bool) {
	level := slog.LevelInfo
	if quiet(r.URL.Path) {
		level = slog.LevelDebug
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
