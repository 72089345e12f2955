package apiserver

import (
	"encoding/json"
	"fmt"
	"net/http"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/stratadev/strata/fieldmanager"
	"github.com/stratadev/strata/registry"
	"github.com/stratadev/strata/storage"
)

// serveScale answers the scale subresource, as kube-apiserver does: an
// autoscaling/v1 Scale whose spec.replicas is read from and written to the
// object's spec.replicas (a custom resource's specReplicasPath), with
// status.replicas and status.selector from the object (statusReplicasPath
// and labelSelectorPath). A write is an update of the object through its
// own strategy (validation, generation).
func (s *Server) serveScale(w http.ResponseWriter, r *http.Request, c *call) {
	kind := c.res.kind
	switch c.info.Verb {
	case "get":
		obj, err := c.res.store.Get(r.Context(), c.info.Namespace, c.info.Name,
			storage.GetOptions{ResourceVersion: r.URL.Query().Get("resourceVersion")})
		if err != nil {
			writeError(w, err)
			return
		}
		sc, err := kind.ScaleOf(obj)
		if err != nil {
			writeError(w, err)
			return
		}
		writeObject(w, r, http.StatusOK, sc)
	case "update":
		body, err := s.readObject(r, c.res.kind)
		if err != nil {
			writeError(w, err)
			return
		}
		var want autoscalingv1.Scale
		if err := json.Unmarshal(body, &want); err != nil {
			writeError(w, apierrors.NewBadRequest(fmt.Sprintf("the body of the request is not a Scale: %v", err)))
			return
		}
		params, err := parseWriteParams(r.URL.Query(), "update", "")
		if err != nil {
			writeError(w, err)
			return
		}
		s.writeScale(w, r, c, params, func(*autoscalingv1.Scale) (*autoscalingv1.Scale, error) { return &want, nil })
	case "patch":
		s.patchScale(w, r, c)
	}
}

func (s *Server) patchScale(w http.ResponseWriter, r *http.Request, c *call) {
	patchType, err := patchTypeOf(r, c.res.kind)
	if err != nil {
		writeError(w, err)
		return
	}
	if patchType == types.ApplyYAMLPatchType {
		s.applyScale(w, r, c)
		return
	}
	// A Scale has no lists: a strategic merge patch needs no schema.
	params, apply, err := s.readPatch(r, c, patchType, nil)
	if err != nil {
		writeError(w, err)
		return
	}
	s.writeScale(w, r, c, params, func(cur *autoscalingv1.Scale) (*autoscalingv1.Scale, error) {
		data, err := json.Marshal(cur)
		if err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		patched, err := apply(data)
		if err != nil {
			return nil, err
		}
		var next autoscalingv1.Scale
		if err := json.Unmarshal(patched, &next); err != nil {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("the patched Scale: %v", err))
		}
		return &next, nil
	})
}

// writeScale sets the replicas a Scale asks for on the object, inside the
// guaranteed update, and answers the resulting Scale.
func (s *Server) writeScale(w http.ResponseWriter, r *http.Request, c *call, params writeParams,
	want func(cur *autoscalingv1.Scale) (*autoscalingv1.Scale, error)) {
	kind := c.res.kind
	warnings := &registry.Warnings{}
	ctx := kind.Context(s.withAdmission(r, c, params.options(c.info.Verb), params.dryRun), c.info.Namespace, c.info.Verb, "scale", warnings)
	manager := fieldmanager.ManagerName(params.fieldManager, r.UserAgent())
	out, err := s.update(ctx, c, params.dryRun, func(cur *registry.Current) (runtime.Object, error) {
		old, err := kind.ScaleOf(cur.Unstructured)
		if err != nil {
			return nil, err
		}
		sc, err := want(old.DeepCopy())
		if err != nil {
			return nil, err
		}
		next, err := scaledObject(ctx, c, cur.Unstructured, old, sc)
		if err != nil {
			return nil, err
		}
		// The writer owns the replicas from now on, recorded on the object
		// with subresource "scale", as kube-apiserver's scale handler
		// records it.
		return s.recordUpdate(c, cur.Live(), next, manager), nil
	})
	if err != nil {
		writeError(w, err)
		return
	}
	sc, err := kind.ScaleOf(out.Unstructured)
	if err != nil {
		writeError(w, err)
		return
	}
	addWarnings(w, warnings.List())
	writeObject(w, r, http.StatusOK, sc)
}
