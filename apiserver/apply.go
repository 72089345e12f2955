package apiserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/stratadev/strata/fieldmanager"
	"github.com/stratadev/strata/registry"
	"github.com/stratadev/strata/storage"
)

// serveApply answers server-side apply (PATCH with
// application/apply-patch+yaml): the configuration is merged into the live
// object by the upstream field manager inside the guaranteed update, so a
// write conflict merges it again into the newer state; the result goes
// through the kind's strategy like any update. An object that does not
// exist is created (201), as kube-apiserver does.
func (s *Server) serveApply(w http.ResponseWriter, r *http.Request, c *call) {
	kind := c.res.kind
	params, config, opts, err := s.readApply(r)
	if err != nil {
		writeError(w, err)
		return
	}
	fm, err := kind.FieldManager(c.info.Subresource)
	if err != nil {
		writeError(w, apierrors.NewInternalError(fmt.Errorf("the field manager of %s: %w", kind.GroupResource(), err)))
		return
	}
	warnings := &registry.Warnings{}
	var applyWarnings []string
	apply := func(live runtime.Object) (runtime.Object, error) {
		obj, ws, err := fm.Apply(live, config, opts)
		if err != nil {
			return nil, err
		}
		applyWarnings = ws
		if kind.CRD() != nil {
			// The merged custom resource holds the configuration's YAML
			// numbers as floats: decode it as a body is decoded (integers,
			// metadata coerced, schema defaults).
			if obj, err = redecode(kind, obj); err != nil {
				return nil, err
			}
		}
		return obj, checkNameMatches(obj, c)
	}
	ctx := kind.Context(r.Context(), c.info.Namespace, "patch", c.info.Subresource, warnings)
	wopts := s.writeOptions(r, c, params, "patch")
	code := http.StatusOK
	out, err := c.res.store.Update(ctx, c.info.Namespace, c.info.Name, c.info.Subresource,
		func(cur *registry.Current) (runtime.Object, error) { return apply(cur.Live()) }, wopts)
	if errors.Is(err, storage.ErrNotFound) && c.info.Subresource == "" {
		code = http.StatusCreated
		out, err = s.createByApply(r.Context(), c, wopts, fm, apply, warnings)
	}
	if err != nil {
		writeError(w, err)
		return
	}
	addWarnings(w, append(applyWarnings, warnings.List()...))
	writeWritten(w, r, c, code, out)
}

// readApply reads a server-side apply: its options, and its body (size
// and nesting limits), the configuration.
func (s *Server) readApply(r *http.Request) (writeParams, []byte, fieldmanager.ApplyOptions, error) {
	params, err := parseWriteParams(r.URL.Query(), "patch", types.ApplyYAMLPatchType)
	if err != nil {
		return writeParams{}, nil, fieldmanager.ApplyOptions{}, err
	}
	config, err := s.readBody(r)
	if err == nil {
		err = checkDepth(config)
	}
	opts := fieldmanager.ApplyOptions{Manager: params.fieldManager, Force: params.force, FieldValidation: string(params.fieldValidation)}
	return params, config, opts, err
}

// createByApply creates the object an apply names when it does not exist:
// the configuration applied to an empty object, then the kind's create
// strategy. A create that loses a race with another is answered 409, as
// kube-apiserver's store answers it.
func (s *Server) createByApply(reqCtx context.Context, c *call, opts registry.WriteOptions, fm *fieldmanager.Manager,
	apply func(runtime.Object) (runtime.Object, error), warnings *registry.Warnings) (registry.Written, error) {
	empty, err := fm.Empty()
	if err != nil {
		return registry.Written{}, apierrors.NewInternalError(err)
	}
	obj, err := apply(empty)
	if err != nil {
		return registry.Written{}, err
	}
	ctx := c.res.kind.Context(reqCtx, c.info.Namespace, "create", "", warnings)
	return c.res.store.Create(ctx, obj, opts)
}

// recordUpdate records in obj's managedFields what a write other than
// apply changed, under manager, as kube-apiserver does for create (live is
// nil), update and every patch type. Like kube-apiserver it never fails the
// write: a kind whose field manager cannot be built keeps obj as it is.
func (s *Server) recordUpdate(c *call, live, obj runtime.Object, manager string) runtime.Object {
	fm, err := c.res.kind.FieldManager(c.info.Subresource)
	if err == nil && live == nil {
		live, err = fm.Empty()
	}
	if err != nil {
		s.log.Warn("managedFields not recorded", "resource", c.res.kind.GroupResource().String(), "err", err)
		return obj
	}
	return registry.UpdateTyped(obj, func(obj runtime.Object) runtime.Object { return fm.Update(live, obj, manager) })
}

// redecode passes an object through the kind's decoding again.
func redecode(kind *registry.Kind, obj runtime.Object) (runtime.Object, error) {
	data, err := json.Marshal(obj)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	out, _, err := kind.Decode(data, registry.FieldValidationIgnore)
	return out, err
}
