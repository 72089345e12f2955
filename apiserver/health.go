package apiserver

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"golang.org/x/time/rate"
	"k8s.io/apiserver/pkg/server/healthz"
)

// healthTimeout bounds one check's etcd read.
const healthTimeout = 2 * time.Second

// installHealth serves /healthz, /livez and /readyz with kube-apiserver's
// own handlers (k8s.io/apiserver/pkg/server/healthz): "ok", or with
// ?verbose one "[+]name ok" line per check, ?exclude=name, each check at
// its own path (/readyz/etcd), and a 500 naming the failed checks (reason
// withheld, as the paths are public). The checks are the ones strata has
// of kube-apiserver's: ping, log and etcd everywhere; on /readyz also
// etcd-readiness, the watch caches' initial lists (kube-apiserver's
// storage-readiness hook waits for the same), Config.ReadyChecks and
// shutdown, which fails once a graceful shutdown has begun so that load
// balancers stop sending.
func (s *Server) installHealth(mux *http.ServeMux) {
	etcd := s.healthCheck("etcd", newEtcdProbe(s.checkEtcd).check)
	live := []healthz.HealthChecker{healthz.PingHealthz, healthz.LogHealthz, etcd}
	healthz.InstallHandler(mux, live...)
	healthz.InstallLivezHandler(mux, live...)
	ready := append(live,
		s.healthCheck("etcd-readiness", newEtcdProbe(s.checkEtcd).check),
		s.healthCheck("poststarthook/storage-readiness", s.WaitReady))
	for _, c := range s.cfg.ReadyChecks {
		if c.Quiet {
			check := c.Check
			ready = append(ready, healthz.NamedCheck(c.Name, func(r *http.Request) error { return check(r.Context()) }))
			continue
		}
		ready = append(ready, s.healthCheck(c.Name, c.Check))
	}
	healthz.InstallPathHandlerWithHealthyFunc(mux, "/readyz", s.markSeenReady,
		append(ready, healthz.NewShutdownHealthz(s.watches.Done()))...)
}

// SeenReady is closed once /readyz has first answered 200: a client (a
// probe, a load balancer, a test) has seen this server ready. What can
// wait for it, such as warming the OpenAPI documents, then leaves the
// cores to the start's last requests.
func (s *Server) SeenReady() <-chan struct{} { return s.seenReady }

// markSeenReady is called by each /readyz handler built (the routes are
// rebuilt when the served resources change) on its first 200.
func (s *Server) markSeenReady() { s.seenReadyOnce.Do(func() { close(s.seenReady) }) }

// healthCheck names a check that is given healthTimeout and whose failure
// is logged with its reason (the response withholds it).
func (s *Server) healthCheck(name string, check func(context.Context) error) healthz.HealthChecker {
	return healthz.NamedCheck(name, func(r *http.Request) error {
		ctx, cancel := context.WithTimeout(r.Context(), healthTimeout)
		defer cancel()
		if err := check(ctx); err != nil {
			s.log.Warn("health check failed", "check", name, "path", r.URL.Path, "err", err)
			return err
		}
		return nil
	})
}

// checkEtcd is a quorum read of one key.
func (s *Server) checkEtcd(ctx context.Context) error {
	if _, err := s.cfg.Client.Get(ctx, "health"); err != nil {
		return fmt.Errorf("etcd: %w", err)
	}
	return nil
}

// serveVersion answers /version.
func (s *Server) serveVersion(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, s.cfg.Version)
}

// etcdProbe rate-limits an etcd check as kube-apiserver's etcd and
// etcd-readiness checks are (storagebackend/factory's newETCD3Check): at
// most one read every half of healthTimeout; a check in between answers
// with the result of the last read started. Probes and load balancers poll
// /readyz often, and each quorum read waits behind the writes in flight.
type etcdProbe struct {
	read    func(context.Context) error
	limiter *rate.Limiter
	mu      sync.Mutex
	last    error
	lastAt  time.Time // when the read that gave last started
}

func newEtcdProbe(read func(context.Context) error) *etcdProbe {
	return &etcdProbe{read: read, limiter: rate.NewLimiter(rate.Every(healthTimeout/2), 1),
		last: errors.New("etcd: not read yet")}
}

func (p *etcdProbe) check(ctx context.Context) error {
	if !p.limiter.Allow() {
		p.mu.Lock()
		defer p.mu.Unlock()
		return p.last
	}
	started := time.Now()
	err := p.read(ctx)
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.lastAt.Before(started) {
		p.last, p.lastAt = err, started
	}
	return err
}
