package apiserver

import (
	"context"
	"time"
)

// EnsureNamespaces creates the default namespaces that do not exist yet
// and resumes the deletion of namespaces an earlier run left Terminating
// (registry.Namespaces.Ensure).
func (s *Server) EnsureNamespaces(ctx context.Context) error {
	if err := s.namespaceRules.Ensure(ctx); err != nil {
		return err
	}
	if s.cfg.Metrics != nil {
		// Counted once the default namespaces exist, then every minute.
		s.countOnce.Do(func() { go s.countObjects(s.ctx, time.Minute) })
	}
	return nil
}
