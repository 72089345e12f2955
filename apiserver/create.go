package apiserver

import (
	"net/http"

	"github.com/stratadev/strata/fieldmanager"
	"github.com/stratadev/strata/registry"
)

// serveCreate answers POST to a collection: decode strictly, record the
// writer's fields, and create through the resource's store (strategy,
// validation, admission, the namespace rules).
func (s *Server) serveCreate(w http.ResponseWriter, r *http.Request, c *call) {
	params, obj, decodeWarnings, err := s.readDecoded(r, c, "create")
	if err != nil {
		writeError(w, err)
		return
	}
	warnings := &registry.Warnings{}
	ctx := c.res.kind.Context(r.Context(), c.info.Namespace, "create", "", warnings)
	obj = s.recordUpdate(c, nil, obj, fieldmanager.ManagerName(params.fieldManager, r.UserAgent()))
	out, err := c.res.store.Create(ctx, obj, s.writeOptions(r, c, params, "create"))
	if err != nil {
		writeError(w, err)
		return
	}
	addWarnings(w, append(decodeWarnings, warnings.List()...))
	writeWritten(w, r, c, http.StatusCreated, out)
}
