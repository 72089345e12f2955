package apiserver

import (
	"net/http"
)

// serveDeleteCollection answers DELETE of a collection: every object the
// selectors match is deleted as by DELETE of it, and the answer is the
// list of what was deleted or marked.
func (s *Server) serveDeleteCollection(w http.ResponseWriter, r *http.Request, c *call) {
	opts, err := s.deleteOptions(r)
	if err == nil {
		err = refuseUnsafeDeleteCollection(opts)
	}
	if err != nil {
		writeError(w, err)
		return
	}
	_, listOpts, err := parseListOptions(r.URL.Query(), false, c.res.kind)
	if err != nil {
		writeError(w, err)
		return
	}
	list, err := c.res.store.List(r.Context(), c.info.Namespace, listOpts)
	if err != nil {
		writeError(w, err)
		return
	}
	out, err := c.res.store.DeleteCollection(r.Context(), list, opts, s.admission(r, c, opts, len(opts.DryRun) > 0))
	if err != nil {
		writeError(w, err)
		return
	}
	s.writeList(w, r, c, out, nil)
}
