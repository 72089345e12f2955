package openapi

import (
	"errors"
	"maps"
	"net/http"
	"slices"
	"strings"

	"k8s.io/kube-openapi/pkg/spec3"
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
		if _, ok := (*s.docs.Load())[path]; !ok {
			http.NotFound(w, r)
			return
		}
		s.v3.HandleGroupVersion(w, r)
	})
	return mux
}

// Warm builds every v3 document not built yet and encodes it for its
// ETag, one after another, and returns why any could not be built. New
// leaves its documents to be built when first asked for, and the first
// /openapi/v3 request needs the ETag of every document: kube-openapi's
// handler then builds and encodes them all at once, on a goroutine each,
// which on a small machine starves the requests served beside it. A
// server warms them on one goroutine once it is seen ready.
//
// Once a document is encoded, Warm empties it (forget). kube-openapi's
// handler keeps the built document beside its JSON but encodes it again
// only when the document's ETag changes, and a built one's never does (a
// change replaces the document): so the built-in kinds' documents, which
// a server held for as long as it ran (megabytes of live heap), are only
// their JSON from then on.
func (s *Service) Warm() error {
	docs := *s.docs.Load()
	var errs []error
	for _, p := range slices.Sorted(maps.Keys(docs)) {
		doc, _, err := docs[p].Get()
		if err != nil {
			errs = append(errs, err)
			continue
		}
		r, err := http.NewRequest(http.MethodGet, "/openapi/v3/"+p, nil)
		if err != nil {
			return err
		}
		w := discard{header: http.Header{}}
		s.v3.HandleGroupVersion(w, r)
		if w.header.Get("Etag") != "" {
			forget(doc)
		}
	}
	return errors.Join(errs...)
}

// forget empties a document whose JSON kube-openapi's handler holds, so
// that only the JSON stays in memory.
func forget(doc *spec3.OpenAPI) { *doc = spec3.OpenAPI{} }

// discard is a response writer that keeps nothing.
type discard struct{ header http.Header }

func (d discard) Header() http.Header         { return d.header }
func (d discard) Write(b []byte) (int, error) { return len(b), nil }
func (d discard) WriteHeader(int)             {}
