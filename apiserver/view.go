package apiserver

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/stratadev/strata/fieldmanager"
	"github.com/stratadev/strata/registry"
)

// serveView answers get, update and patch of a subresource whose object is
// a view of the resource's object (registry.Viewer: scale), as
// kube-apiserver's handlers call a REST's Get and Update.
func (s *Server) serveView(w http.ResponseWriter, r *http.Request, c *call, v registry.Viewer) {
	switch c.info.Verb {
	case "get":
		obj, err := v.Get(r.Context(), c.info.Namespace, c.info.Name, r.URL.Query().Get("resourceVersion"))
		if err != nil {
			writeError(w, err)
			return
		}
		writeObject(w, r, http.StatusOK, obj)
	case "update":
		body, err := s.readObject(r, c.res.kind)
		if err != nil {
			writeError(w, err)
			return
		}
		want := v.New()
		if err := json.Unmarshal(body, want); err != nil {
			writeError(w, apierrors.NewBadRequest(fmt.Sprintf("the body of the request is not a %s: %v", kindName(want), err)))
			return
		}
		params, err := parseWriteParams(r.URL.Query(), "update", "")
		if err != nil {
			writeError(w, err)
			return
		}
		s.writeView(w, r, c, v, params, func(runtime.Object) (runtime.Object, error) { return want, nil })
	case "patch":
		s.patchView(w, r, c, v)
	}
}

func (s *Server) patchView(w http.ResponseWriter, r *http.Request, c *call, v registry.Viewer) {
	patchType, err := patchTypeOf(r, c.res.kind)
	if err != nil {
		writeError(w, err)
		return
	}
	if patchType == types.ApplyYAMLPatchType {
		s.applyView(w, r, c, v)
		return
	}
	// A view has no lists: a strategic merge patch needs no schema.
	params, apply, err := s.readPatch(r, c, patchType, nil)
	if err != nil {
		writeError(w, err)
		return
	}
	s.writeView(w, r, c, v, params, func(cur runtime.Object) (runtime.Object, error) {
		data, err := json.Marshal(cur)
		if err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		patched, err := apply(data)
		if err != nil {
			return nil, err
		}
		next := v.New()
		if err := json.Unmarshal(patched, next); err != nil {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("the patched %s: %v", kindName(next), err))
		}
		return next, nil
	})
}

// writeView writes the view want computes and answers the resulting view.
func (s *Server) writeView(w http.ResponseWriter, r *http.Request, c *call, v registry.Viewer, params writeParams, want registry.ViewChange) {
	warnings := &registry.Warnings{}
	ctx := c.res.kind.Context(r.Context(), c.info.Namespace, c.info.Verb, c.info.Subresource, warnings)
	manager := fieldmanager.ManagerName(params.fieldManager, r.UserAgent())
	record := func(live, obj runtime.Object) runtime.Object { return s.recordUpdate(c, live, obj, manager) }
	out, err := v.Update(ctx, c.info.Namespace, c.info.Name, want, record, s.writeOptions(r, c, params, c.info.Verb))
	if err != nil {
		writeError(w, err)
		return
	}
	addWarnings(w, warnings.List())
	writeObject(w, r, http.StatusOK, out)
}

// kindName is the name of a view's Go type, which is its kind's.
func kindName(obj runtime.Object) string {
	return reflect.Indirect(reflect.ValueOf(obj)).Type().Name()
}

// applyView answers server-side apply of a view (the scale subresource).
func (s *Server) applyView(w http.ResponseWriter, r *http.Request, c *call, v registry.Viewer) {
	applier, ok := v.(registry.ViewApplier)
	if !ok {
		writeError(w, statusError(http.StatusUnsupportedMediaType, metav1.StatusReasonUnsupportedMediaType,
			"server-side apply of the "+c.info.Subresource+" subresource is not served"))
		return
	}
	params, config, apply, err := s.readApply(r)
	if err != nil {
		writeError(w, err)
		return
	}
	warnings := &registry.Warnings{}
	ctx := c.res.kind.Context(r.Context(), c.info.Namespace, "patch", c.info.Subresource, warnings)
	out, applyWarnings, err := applier.Apply(ctx, c.info.Namespace, c.info.Name, config, apply, s.writeOptions(r, c, params, "patch"))
	if err != nil {
		writeError(w, err)
		return
	}
	addWarnings(w, append(applyWarnings, warnings.List()...))
	writeObject(w, r, http.StatusOK, out)
}
