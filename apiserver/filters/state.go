package filters

import (
	"context"
	"net/http"
	"sync/atomic"
	"time"

	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/endpoints/request"
)

// state is what the outermost filter knows of a request, shared with the
// filters inside it through the context.
type state struct {
	start     time.Time
	info      *request.RequestInfo
	labels    labels
	userAgent string // read before any filter changes the headers
	w         *recorder
	// user is set by the filter inside authentication and read once the
	// request has been served; atomically, as a handler the request
	// timeout gave up on still runs when the request is logged.
	user atomic.Pointer[user.Info]
}

type stateKey struct{}

func withState(ctx context.Context, st *state) context.Context {
	return context.WithValue(ctx, stateKey{}, st)
}

// stateFrom is the state of the request ctx belongs to; Chain always sets
// one.
func stateFrom(ctx context.Context) *state {
	st, _ := ctx.Value(stateKey{}).(*state)
	return st
}

// recorder remembers the status code of a response.
type recorder struct {
	http.ResponseWriter
	status int
}

// Unwrap gives http.ResponseController and kube's WrapForHTTP1Or2 the
// writer underneath.
func (w *recorder) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *recorder) WriteHeader(code int) {
	// Informational answers (100 Continue, 103 Early Hints) precede the
	// real one; 101 Switching Protocols is final.
	if w.status == 0 && (code >= 200 || code == http.StatusSwitchingProtocols) {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *recorder) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// Flush sends the headers (200 unless written) and what was buffered; the
// watch handler flushes every event.
func (w *recorder) Flush() {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	_ = http.NewResponseController(w.ResponseWriter).Flush()
}

// started says whether the response has begun.
func (w *recorder) started() bool { return w.status != 0 }

// code is the status the client got: net/http answers 200 for a handler
// that wrote nothing.
func (w *recorder) code() int {
	if w.status == 0 {
		return http.StatusOK
	}
	return w.status
}
