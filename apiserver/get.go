package apiserver

import (
	"net/http"

	"github.com/stratadev/strata/storage"
)

// serveGet answers GET of one object (and of its status subresource, which
// is the whole object as in kube-apiserver). It only encodes the object, so
// it reads the cached one without copying it, as lists read their items.
func (s *Server) serveGet(w http.ResponseWriter, r *http.Request, c *call) {
	rv := r.URL.Query().Get("resourceVersion")
	obj, err := c.res.store.Get(r.Context(), c.info.Namespace, c.info.Name, storage.GetOptions{ResourceVersion: rv, Shared: true})
	if err != nil {
		writeError(w, err)
		return
	}
	s.writeOne(w, r, c, obj)
}
