package apiserver

import (
	"net/http"
)

// serveList answers GET of a collection, following the resourceVersion
// table (the storage layer decides every case and its errors).
func (s *Server) serveList(w http.ResponseWriter, r *http.Request, c *call) {
	_, opts, err := parseListOptions(r.URL.Query(), false, c.res.kind)
	if err != nil {
		writeError(w, err)
		return
	}
	list, memos, err := c.res.store.ListMemos(r.Context(), c.info.Namespace, opts)
	if err != nil {
		writeError(w, err)
		return
	}
	s.writeList(w, r, c, list, memos)
}
