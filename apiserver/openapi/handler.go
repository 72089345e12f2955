package openapi

import (
	"net/http"
	"strings"
)

// Handler serves /openapi/v2, /openapi/v3 and /openapi/v3/{path} with
// kube-openapi's handlers, as kube-apiserver does: JSON or protobuf by the
// Accept header, ETags, gzip for v2, and immutable caching of v3 documents
// asked for with their ?hash=. Other paths get 404, and so does an unknown
// v3 document (kube-apiserver answers those with an empty 200).
func (s *Service) Handler() http.Handler { return s.mux }

// Install registers the handler on mux for /openapi/v2, /openapi/v3 and
// /openapi/v3/. Like mux.Handle, it panics if one of them is registered
// already.
func (s *Service) Install(mux *http.ServeMux) {
	for _, pattern := range []string{"/openapi/v2", "/openapi/v3", "/openapi/v3/"} {
		mux.Handle(pattern, s.mux)
	}
}

func (s *Service) newMux() *http.ServeMux {
	mux := http.NewServeMux()
	s.v2.RegisterOpenAPIVersionedService("/openapi/v2", mux)
	mux.HandleFunc("/openapi/v3", s.v3.HandleDiscovery)
	mux.HandleFunc("/openapi/v3/", func(w http.ResponseWriter, r *http.Request) {
		path := strings.TrimPrefix(r.URL.Path, "/openapi/v3/")
		if paths := s.v3Paths.Load(); paths == nil || !(*paths)[path] {
			http.NotFound(w, r)
			return
		}
		s.v3.HandleGroupVersion(w, r)
	})
	return mux
}
