package apiserver

import (
	"net/http"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stratadev/strata/fieldmanager"
	"github.com/stratadev/strata/registry"
)

// serveCreate answers POST to a collection: decode strictly, default,
// prepare and validate as kube-apiserver does, check the namespace, store.
func (s *Server) serveCreate(w http.ResponseWriter, r *http.Request, c *call) {
	if c.res.terminating {
		writeError(w, statusError(http.StatusMethodNotAllowed, metav1.StatusReasonMethodNotAllowed,
			"create not allowed while custom resource definition is terminating"))
		return
	}
	params, obj, decodeWarnings, err := s.readDecoded(r, c, "create")
	if err != nil {
		writeError(w, err)
		return
	}
	kind := c.res.kind
	warnings := &registry.Warnings{}
	ctx := kind.Context(r.Context(), c.info.Namespace, "create", "", warnings)
	obj = s.recordUpdate(c, nil, obj, fieldmanager.ManagerName(params.fieldManager, r.UserAgent()))
	u, err := kind.PrepareCreate(ctx, obj)
	if err != nil {
		writeError(w, err)
		return
	}
	if kind.Namespaced {
		if err := s.checkNamespaceWritable(ctx, c.info.Namespace, kind.GroupResource(), u.GetName()); err != nil {
			writeError(w, err)
			return
		}
	}
	addWarnings(w, append(decodeWarnings, warnings.List()...))
	if params.dryRun {
		writeObject(w, r, http.StatusCreated, u.Object)
		return
	}
	out, err := c.res.store.Create(ctx, u)
	if err != nil {
		writeError(w, err)
		return
	}
	writeObject(w, r, http.StatusCreated, out.Object)
}
