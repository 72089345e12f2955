package apiserver

import (
	"context"
	"fmt"
	"net/http"
	"time"
)

// serveLive answers /livez: the process is serving.
func (s *Server) serveLive(w http.ResponseWriter, r *http.Request) {
	writeText(w, http.StatusOK, "ok")
}

// serveHealth answers /healthz and /readyz: ok only when etcd answers a
// quorum read and every watch cache holds its initial list.
func (s *Server) serveHealth(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	if err := s.checkReady(ctx); err != nil {
		s.log.Warn("not ready", "path", r.URL.Path, "err", err)
		writeText(w, http.StatusInternalServerError, fmt.Sprintf("[-]etcd failed: %v\nhealthz check failed", err))
		return
	}
	writeText(w, http.StatusOK, "ok")
}

func (s *Server) checkReady(ctx context.Context) error {
	if _, err := s.cfg.Client.Get(ctx, "health"); err != nil {
		return fmt.Errorf("etcd: %w", err)
	}
	return s.WaitReady(ctx)
}

// serveVersion answers /version.
func (s *Server) serveVersion(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, s.cfg.Version)
}

func writeText(w http.ResponseWriter, code int, text string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	_, _ = w.Write([]byte(text))
}
