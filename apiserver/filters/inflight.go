package filters

import (
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/endpoints/request"
)

// tooManyRequestsMessage is what kube-apiserver answers beyond the limits,
// as text/plain (http.Error), not as a Status: see tooManyRequests in
// k8s.io/apiserver/pkg/server/filters/priority-and-fairness.go, which
// maxinflight.go calls.
const tooManyRequestsMessage = "Too many requests, please try again later."

// limitInFlight is kube-apiserver's WithMaxInFlightLimit: read-only (get,
// list) and mutating requests each take a slot of their own pool for as
// long as they are served; one that finds its pool full is answered 429
// with Retry-After: 1, unless its user is in system:masters. A nil pool is
// unlimited. Long-running requests (watches) take no slot.
func limitInFlight(next http.Handler, readOnly, mutating chan struct{}, m *Metrics) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		st := stateFrom(r.Context())
		if IsLongRunning(st.info) {
			next.ServeHTTP(w, r)
			return
		}
		pool, mark := readOnly, m.readOnly
		if isMutating(st.info) {
			pool, mark = mutating, m.mutating
		}
		if pool != nil {
			select {
			case pool <- struct{}{}:
				defer func() { <-pool }()
			default:
				if !privileged(r) {
					m.terminated(st.labels, http.StatusTooManyRequests)
					w.Header().Set("Retry-After", "1")
					http.Error(w, tooManyRequestsMessage, http.StatusTooManyRequests)
					return
				}
			}
		}
		mark.add(1)
		defer mark.add(-1)
		next.ServeHTTP(w, r)
	})
}

// privileged: kube-apiserver always serves system:masters ("a super-admin
// or a loopback connection"), whatever the limits.
func privileged(r *http.Request) bool {
	u, ok := request.UserFrom(r.Context())
	return ok && slices.Contains(u.GetGroups(), user.SystemPrivilegedGroup)
}

// newPool is a pool of limit slots; nil (unlimited) for 0.
func newPool(limit int) chan struct{} {
	if limit <= 0 {
		return nil
	}
	return make(chan struct{}, limit)
}

// watermark counts requests in flight and reports, like kube-apiserver's
// apiserver_current_inflight_requests, the highest count of about the
// last second rather than the count of the moment: a peak stays visible
// for a second after it was last reached.
type watermark struct {
	now  func() time.Time
	mu   sync.Mutex
	cur  int
	peak int
	at   time.Time // when peak was last reached
}

func (w *watermark) add(delta int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.cur += delta
	if now := w.now(); w.cur >= w.peak || now.Sub(w.at) >= time.Second {
		w.peak, w.at = w.cur, now
	}
}

func (w *watermark) value() float64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	if now := w.now(); now.Sub(w.at) >= time.Second {
		w.peak, w.at = w.cur, now
	}
	return float64(w.peak)
}

// inflightGauge is the apiserver_current_inflight_requests series of one
// request kind (readOnly or mutating).
func inflightGauge(kind string, w *watermark) prometheus.Collector {
	return prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name:        "apiserver_current_inflight_requests",
		Help:        "Maximal number of currently used inflight request limit of this apiserver per request kind in last second.",
		ConstLabels: prometheus.Labels{"request_kind": kind},
	}, w.value)
}
