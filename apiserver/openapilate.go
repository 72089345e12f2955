package apiserver

import (
	"context"
	"fmt"
	"net/http"

	"github.com/stratadev/strata/apiserver/openapi"
	"github.com/stratadev/strata/registry"
)

// OpenAPIBuild is the OpenAPI service of the built-in kinds, made beside
// the rest of the start (its routes and definitions take a fifth of a
// second of CPU; its documents are built later, WarmOpenAPI). Requests for the
// documents, and the CRD controller's changes to them, wait until it is
// built.
type OpenAPIBuild struct {
	done chan struct{}
	svc  *openapi.Service
	err  error
}

// BuildOpenAPI starts building the documents of kinds (registry.Builtin,
// as Config.Kinds defaults to), gitVersion in their info: a server can
// start it before its etcd, which the documents do not need, and hand it
// to New (Config.OpenAPI).
func BuildOpenAPI(kinds []*registry.Kind, gitVersion string) *OpenAPIBuild {
	l := &OpenAPIBuild{done: make(chan struct{})}
	go func() {
		defer close(l.done)
		l.svc, l.err = openapi.New(registry.OpenAPIDefinitions, openAPIScheme, openAPIResources(kinds),
			openapi.WithInfo("Kubernetes", gitVersion))
		if l.err != nil {
			l.err = fmt.Errorf("apiserver: OpenAPI documents: %w", l.err)
		}
	}()
	return l
}

// wait returns the service once it is built.
func (l *OpenAPIBuild) wait(ctx context.Context) (*openapi.Service, error) {
	select {
	case <-l.done:
		return l.svc, l.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// install serves /openapi/v2 and /openapi/v3 on mux, each request once the
// documents are built.
func (l *OpenAPIBuild) install(mux *http.ServeMux) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		svc, err := l.wait(r.Context())
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		svc.Handler().ServeHTTP(w, r)
	})
	for _, pattern := range []string{"/openapi/v2", "/openapi/v3", "/openapi/v3/"} {
		mux.Handle(pattern, h)
	}
}

// WaitOpenAPI returns once the OpenAPI documents are built, or why they
// could not be: a server is not ready before (WaitReady does not wait for
// them, so that they are built beside the stores' first lists).
func (s *Server) WaitOpenAPI(ctx context.Context) error {
	_, err := s.openapi.wait(ctx)
	return err
}

// WarmOpenAPI builds the v3 documents and encodes them for their ETags,
// on one goroutine (openapi.Service.Warm): a server calls it once it is
// seen ready (SeenReady), and the first /openapi/v3 request then finds
// them done.
func (s *Server) WarmOpenAPI(ctx context.Context) {
	svc, err := s.openapi.wait(ctx)
	if err == nil {
		err = svc.Warm()
	}
	if err != nil {
		s.log.Error("OpenAPI v3 documents", "err", err)
	}
}
