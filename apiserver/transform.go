package apiserver

import (
	"net/http"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// writeTransformed answers with obj as the Table or PartialObjectMetadata
// the client asked for. kube-apiserver transforms the answer of every verb
// that returns an object this way (transformResponseObject), a write's as
// well as a get's: client-go's metadata client decodes nothing else, also
// from a PATCH, PUT, POST or DELETE. The Table's options are read after
// the write, as upstream reads them, so a bad includeObject is a 400 for a
// write that took place.
func writeTransformed(w http.ResponseWriter, r *http.Request, c *call, code int, obj *unstructured.Unstructured) {
	if c.media.form == outputPartial {
		writeResult(w, c, code, partialOf(obj))
		return
	}
	opts, err := tableOptions(r.URL.Query())
	if err != nil {
		writeError(w, err)
		return
	}
	table, err := c.res.kind.Table(r.Context(), []*unstructured.Unstructured{obj}, false, opts)
	if err != nil {
		writeError(w, err)
		return
	}
	table.ResourceVersion = obj.GetResourceVersion()
	writeResult(w, c, code, table)
}
