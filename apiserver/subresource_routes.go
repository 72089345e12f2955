package apiserver

import (
	"net/http"

	"github.com/stratadev/strata/registry"
)

// serveMoreSubresource answers the subresources besides status, scale and
// those a registry.Creater serves, and says whether it did: the
// subresources kube-apiserver serves through a kubelet (a
// registry.Connecter), and
// those whose get, update and patch are the object's through their own
// strategy (namespaces/finalize, certificatesigningrequests/approval,
// pods/ephemeralcontainers, pods/resize), which take the ordinary paths
// with the subresource named.
func (s *Server) serveMoreSubresource(w http.ResponseWriter, r *http.Request, c *call) bool {
	kind := c.res.kind
	if kind.Namespaced && c.info.Namespace == "" {
		return false
	}
	if _, isCreater := c.res.store.Creater(c.info.Subresource); isCreater {
		// Answers create only (routed before).
		writeError(w, methodNotAllowed())
		return true
	}
	if connecter, ok := c.res.store.Connecter(c.info.Subresource); ok {
		if _, allowed := kind.KubeletSubresource(c.info.Subresource, c.info.Verb); !allowed {
			writeError(w, methodNotAllowed())
			return true
		}
		serveConnect(w, r, c, connecter)
		return true
	}
	isUpdate, allowed := kind.UpdateSubresourceAllows(c.info.Subresource, c.info.Verb)
	switch {
	case !isUpdate:
		return false
	case !allowed:
		writeError(w, methodNotAllowed())
	default:
		s.dispatch(w, r, c)
	}
	return true
}

// serveCreater answers a create that a registry.Creater serves in place of
// the generic create (pods/eviction, pods/binding and bindings,
// serviceaccounts/token): the body read as its kind, the answer 201.
func (s *Server) serveCreater(w http.ResponseWriter, r *http.Request, c *call, creater registry.Creater) {
	body, err := s.readObject(r, creater.BodyKind())
	if err != nil {
		writeError(w, err)
		return
	}
	params, err := parseWriteParams(r.URL.Query(), "create", "")
	if err != nil {
		writeError(w, err)
		return
	}
	out, warnings, err := creater.Create(r.Context(), &registry.CreateRequest{Namespace: c.info.Namespace, Name: c.info.Name,
		Body: body, DryRun: params.dryRun, FieldValidation: params.fieldValidation})
	if err != nil {
		writeError(w, err)
		return
	}
	addWarnings(w, warnings)
	writeObject(w, r, http.StatusCreated, out)
}

// serveConnect answers a subresource kube-apiserver serves through a
// kubelet or a proxy, which strata answers up to the point of connecting.
func serveConnect(w http.ResponseWriter, r *http.Request, c *call, connecter registry.Connecter) {
	ctx := c.res.kind.Context(r.Context(), c.info.Namespace, c.info.Verb, c.info.Subresource, nil)
	noContent, err := connecter.Connect(ctx, c.info.Namespace, c.info.Name, r.URL.Query())
	if err == nil && noContent {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	writeError(w, err)
}
