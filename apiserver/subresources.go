package apiserver

import (
	"net/http"
)

// serveMoreSubresource answers the subresources of built-in kinds besides
// status, scale and binding, and says whether it did: pods/eviction
// (eviction.go), serviceaccounts/token (tokenrequest.go), the subresources kube-apiserver serves through a kubelet
// (kubelet.go), and those whose get, update and patch are the object's
// through their own strategy (namespaces/finalize,
// certificatesigningrequests/approval, pods/ephemeralcontainers,
// pods/resize), which take the ordinary paths with the subresource named.
func (s *Server) serveMoreSubresource(w http.ResponseWriter, r *http.Request, c *call) bool {
	kind := c.res.kind
	if kind.Namespaced && c.info.Namespace == "" {
		return false
	}
	if c.info.Subresource == "eviction" && kind.HasEviction() {
		if c.info.Verb != "create" {
			writeError(w, methodNotAllowed())
			return true
		}
		s.serveEviction(w, r, c)
		return true
	}
	if c.info.Subresource == "token" && kind.HasTokenRequest() {
		if c.info.Verb != "create" {
			writeError(w, methodNotAllowed())
			return true
		}
		s.serveTokenRequest(w, r, c)
		return true
	}
	if isKubelet, allowed := kind.KubeletSubresource(c.info.Subresource, c.info.Verb); isKubelet {
		if !allowed {
			writeError(w, methodNotAllowed())
			return true
		}
		s.serveKubelet(w, r, c)
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
