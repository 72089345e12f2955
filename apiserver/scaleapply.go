package apiserver

import (
	"context"
	"fmt"
	"net/http"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/stratadev/strata/fieldmanager"
	"github.com/stratadev/strata/registry"
)

// applyScale answers server-side apply of the scale subresource, as
// kube-apiserver's ScaleREST and apiextensions-apiserver's scale storage
// do: the configuration is applied to the object's Scale by the Scale's
// field manager (registry.Kind.ApplyScale), inside the guaranteed update,
// and the replicas it asks for are written to the object through its
// strategy, with the managedFields the Scale's translate to. There is no
// create: the object must exist.
func (s *Server) applyScale(w http.ResponseWriter, r *http.Request, c *call) {
	kind := c.res.kind
	params, err := parseWriteParams(r.URL.Query(), "patch", types.ApplyYAMLPatchType)
	if err != nil {
		writeError(w, err)
		return
	}
	config, err := s.readBody(r)
	if err == nil {
		err = checkDepth(config)
	}
	if err != nil {
		writeError(w, err)
		return
	}
	opts := fieldmanager.ApplyOptions{Manager: params.fieldManager, Force: params.force, FieldValidation: string(params.fieldValidation)}
	warnings := &registry.Warnings{}
	var applyWarnings []string
	ctx := kind.Context(s.withAdmission(r, c, params.options("patch"), params.dryRun), c.info.Namespace, "patch", "scale", warnings)
	out, err := s.update(ctx, c, params.dryRun, func(cur *registry.Current) (runtime.Object, error) {
		old, err := kind.ScaleOf(cur.Unstructured)
		if err != nil {
			return nil, err
		}
		sc, managed, ws, err := kind.ApplyScale(cur.Unstructured, old, config, opts)
		if err != nil {
			return nil, err
		}
		applyWarnings = ws
		next, err := scaledObject(ctx, c, cur.Unstructured, old, sc)
		if err != nil {
			return nil, err
		}
		next.SetManagedFields(managed)
		return next, nil
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
	addWarnings(w, append(applyWarnings, warnings.List()...))
	writeObject(w, r, http.StatusOK, sc)
}

// scaledObject is cur asking for the replicas of sc, a Scale written over
// old: the Scale is validated, and must name the object and (if it says)
// its resourceVersion.
func scaledObject(ctx context.Context, c *call, cur *unstructured.Unstructured, old, sc *autoscalingv1.Scale) (*unstructured.Unstructured, error) {
	kind := c.res.kind
	if err := kind.ValidateScale(ctx, sc, old); err != nil {
		return nil, err
	}
	if sc.Name != "" && sc.Name != c.info.Name {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", sc.Name, c.info.Name))
	}
	if sc.ResourceVersion != "" && sc.ResourceVersion != cur.GetResourceVersion() {
		return nil, apierrors.NewConflict(kind.GroupResource(), c.info.Name, errModified)
	}
	return kind.WithReplicas(cur, sc.Spec.Replicas)
}
