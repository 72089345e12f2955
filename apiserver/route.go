package apiserver

import (
	"net/http"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"

	"github.com/stratadev/strata/registry"
)

// requestInfoFactory parses /api and /apis paths as kube-apiserver does.
var requestInfoFactory = &genericapirequest.RequestInfoFactory{
	APIPrefixes:          sets.NewString("api", "apis"),
	GrouplessAPIPrefixes: sets.NewString("api"),
}

// requestInfoOf is the request's RequestInfo: a copy of the one the
// filters parsed (this handler changes it), or parsed here when the handler
// runs without them (as in tests) or the path did not parse.
func requestInfoOf(r *http.Request) (*genericapirequest.RequestInfo, error) {
	if info, ok := genericapirequest.RequestInfoFrom(r.Context()); ok {
		c := *info
		return &c, nil
	}
	return requestInfoFactory.NewRequestInfo(r)
}

// call is one resource request, parsed.
type call struct {
	info *genericapirequest.RequestInfo
	res  *resource
	// media is the response's negotiated form and encoding.
	media media
}

// Handler returns the API's HTTP handler (without authentication).
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	s.installHealth(mux)
	mux.HandleFunc("/version", s.serveVersion)
	s.openapi.install(mux)
	mux.HandleFunc("/api", s.serveAPI)
	mux.HandleFunc("/api/", s.serveAPI)
	mux.HandleFunc("/apis", s.serveAPI)
	mux.HandleFunc("/apis/", s.serveAPI)
	for path, h := range s.cfg.ExtraHandlers {
		mux.Handle(path, h)
	}
	// Paths outside the API are kube-apiserver's plain-text 404 (its
	// notfoundhandler ends in http.NotFound).
	mux.HandleFunc("/", http.NotFound)
	return mux
}

// serveAPI answers discovery and resource requests.
func (s *Server) serveAPI(w http.ResponseWriter, r *http.Request) {
	w = withErrorEncoding(w, r)
	info, err := requestInfoOf(r)
	if err != nil {
		writeError(w, apierrors.NewBadRequest(err.Error()))
		return
	}
	if !info.IsResourceRequest {
		s.serveDiscovery(w, r)
		return
	}
	if _, ok := genericapirequest.RequestInfoFrom(r.Context()); !ok {
		// Without the filters (the loopback client): for the code
		// behind that reads it, as RBAC's escalation check does.
		r = r.WithContext(genericapirequest.WithRequestInfo(r.Context(), info))
	}
	c, err := s.resolve(r, info)
	if err != nil {
		writeError(w, err)
		return
	}
	s.route(w, r, c)
}

// resolve finds the resource a request names (404 for one not served, or
// a cluster-scoped one under a namespace).
func (s *Server) resolve(r *http.Request, info *genericapirequest.RequestInfo) (*call, error) {
	gvr := schema.GroupVersionResource{Group: info.APIGroup, Version: info.APIVersion, Resource: info.Resource}
	res, ok := s.current().lookup(gvr)
	if ok && !res.kind.Namespaced && !namespaceInPath(r.URL.Path, info) {
		// RequestInfoFactory reads /api/v1/namespaces/{name} as the
		// namespace {name}: the path of a cluster-scoped object whose
		// resource is the namespaces' own, not a namespace prefix.
		info.Namespace = ""
	}
	if !ok || (!res.kind.Namespaced && info.Namespace != "") {
		return nil, notFoundPath()
	}
	return &call{info: info, res: res}, nil
}

// route hands a resource request to its handler: a review's, a
// subresource store's, or the verb's.
func (s *Server) route(w http.ResponseWriter, r *http.Request, c *call) {
	res, info := c.res, c.info
	if res.kind.IsReview() {
		s.serveReview(w, r, c)
		return
	}
	if creater, ok := res.store.Creater(info.Subresource); ok && info.Verb == "create" {
		s.serveCreater(w, r, c, creater)
		return
	}
	if info.Subresource != "" && s.serveMoreSubresource(w, r, c) {
		return
	}
	if info.Subresource != "" && !slices.Contains(res.kind.Subresources(), info.Subresource) {
		writeError(w, missingSubresource(res, info))
		return
	}
	if !methodAllowed(res, info) || (info.Subresource == "" && !res.kind.Allows(info.Verb)) ||
		(info.Subresource != "" && !oneOf(info.Verb, "get", "update", "patch")) {
		refuseMethod(w, r, res, info)
		return
	}
	if v, ok := res.store.Viewer(info.Subresource); ok {
		s.serveView(w, r, c, v)
		return
	}
	s.dispatch(w, r, c)
}

func (s *Server) dispatch(w http.ResponseWriter, r *http.Request, c *call) {
	m, err := negotiate(r, c.res.kind.HasProtobuf(), c.info.Verb == "watch")
	if err != nil {
		writeError(w, err)
		return
	}
	c.media = m
	switch c.info.Verb {
	case "get":
		s.serveGet(w, r, c)
	case "list":
		s.serveList(w, r, c)
	case "watch":
		s.serveWatch(w, r, c)
	case "create":
		s.serveCreate(w, r, c)
	case "update":
		s.serveUpdate(w, r, c)
	case "patch":
		s.servePatch(w, r, c)
	case "delete":
		s.serveDelete(w, r, c)
	case "deletecollection":
		s.serveDeleteCollection(w, r, c)
	default:
		writeError(w, apierrors.NewMethodNotSupported(c.res.kind.GroupResource(), c.info.Verb))
	}
}

// methodAllowed: POST names a collection, PUT and PATCH an object; a
// namespaced resource across all namespaces is only listed and watched.
func methodAllowed(res *resource, info *genericapirequest.RequestInfo) bool {
	if oneOf(info.Verb, "create", "update", "patch") && (info.Verb == "create") != (info.Name == "") {
		return false
	}
	if res.kind.Namespaced && info.Namespace == "" {
		return oneOf(info.Verb, "list", "watch")
	}
	return true
}

// notFoundPath is kube-apiserver's 404 for a path it does not serve.
func notFoundPath() error { return registry.NotServed() }

// namespaceInPath says whether a resource request's path has a namespace
// prefix (/namespaces/{namespace}/{resource}...) rather than naming an
// object of the resource called namespaces (/namespaces/{name}[/{sub}]),
// which RequestInfoFactory also reads as a namespace.
func namespaceInPath(path string, info *genericapirequest.RequestInfo) bool {
	if info.Namespace == "" {
		return false
	}
	parts := strings.Split(strings.Trim(path, "/"), "/")
	for i := 0; i+2 < len(parts); i++ {
		if parts[i] == "namespaces" && parts[i+1] == info.Namespace && parts[i+2] != "" && info.Resource == parts[i+2] {
			return true
		}
	}
	return false
}

func oneOf(s string, options ...string) bool {
	for _, o := range options {
		if s == o {
			return true
		}
	}
	return false
}
