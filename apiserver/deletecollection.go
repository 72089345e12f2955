package apiserver

import (
	"errors"
	"net/http"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/stratadev/strata/storage"
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
	out := &unstructured.UnstructuredList{}
	out.SetResourceVersion(list.GetResourceVersion())
	actx := s.withAdmission(r, c, opts, len(opts.DryRun) > 0)
	for i := range list.Items {
		item := &list.Items[i]
		obj, _, err := s.deleteOne(actx, c.res, item.GetNamespace(), item.GetName(), opts)
		if errors.Is(err, storage.ErrNotFound) {
			continue
		}
		if err != nil {
			writeError(w, err)
			return
		}
		out.Items = append(out.Items, *obj)
	}
	s.writeList(w, r, c, out, nil)
}
