package apiserver

import (
	"fmt"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/stratadev/strata/fieldmanager"
	"github.com/stratadev/strata/registry"
)

// serveUpdate answers PUT of an object or its status: compare-and-swap when
// the body carries a resourceVersion (stale is 409), unconditional without.
func (s *Server) serveUpdate(w http.ResponseWriter, r *http.Request, c *call) {
	params, obj, decodeWarnings, err := s.readDecoded(r, c, "update")
	if err != nil {
		writeError(w, err)
		return
	}
	if err := checkNameMatches(obj, c); err != nil {
		writeError(w, err)
		return
	}
	warnings := &registry.Warnings{}
	ctx := c.res.kind.Context(r.Context(), c.info.Namespace, "update", c.info.Subresource, warnings)
	manager := fieldmanager.ManagerName(params.fieldManager, r.UserAgent())
	out, err := c.res.store.Update(ctx, c.info.Namespace, c.info.Name, c.info.Subresource, func(cur *registry.Current) (runtime.Object, error) {
		return s.recordUpdate(c, cur.Live(), obj.DeepCopyObject(), manager), nil
	}, s.writeOptions(r, c, params, "update"))
	if err != nil {
		writeError(w, err)
		return
	}
	addWarnings(w, append(decodeWarnings, warnings.List()...))
	writeWritten(w, r, c, http.StatusOK, out)
}

// checkNameMatches refuses a body naming another object than the URL, and
// fills an empty name (and namespace) from the URL.
func checkNameMatches(obj runtime.Object, c *call) error {
	m, ok := obj.(interface {
		GetName() string
		SetName(string)
		GetNamespace() string
		SetNamespace(string)
	})
	if !ok {
		return apierrors.NewInternalError(fmt.Errorf("%T has no metadata", obj))
	}
	switch m.GetName() {
	case "":
		m.SetName(c.info.Name)
	case c.info.Name:
	default:
		return apierrors.NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)",
			m.GetName(), c.info.Name))
	}
	return nil
}
