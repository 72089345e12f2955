package filters

import (
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
)

// panicMessage is kube-apiserver's answer to a request whose handler
// panicked, as text/plain (WithPanicRecovery in
// k8s.io/apiserver/pkg/server/filters/wrap.go).
const panicMessage = "This request caused apiserver to panic. Look in the logs for details."

// recoverPanics turns a panic below it into a 500 and an error log with
// the stack, so the client gets an answer and the connection survives.
// http.ErrAbortHandler goes on to net/http, which aborts the response
// without logging: the handler asked for exactly that. A panic after the
// response has begun aborts it too: a 500 cannot follow a 200, and ending
// the response normally would hand the client a truncated body that looks
// complete.
func recoverPanics(next http.Handler, log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			p := recover()
			if p == nil {
				return
			}
			if p == http.ErrAbortHandler {
				panic(p)
			}
			log.Error("apiserver panic'd", "method", r.Method, "URI", requestURI(r),
				"panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			if stateFrom(r.Context()).w.started() {
				panic(http.ErrAbortHandler)
			}
			http.Error(w, panicMessage, http.StatusInternalServerError)
		}()
		next.ServeHTTP(w, r)
	})
}

// requestURI is the URI the client sent.
func requestURI(r *http.Request) string {
	if r.RequestURI != "" {
		return r.RequestURI
	}
	return r.URL.RequestURI()
}
