package apiserver

import (
	"context"
	"errors"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/stratadev/strata/fieldmanager"
	"github.com/stratadev/strata/registry"
)

// serveCreate answers POST to a collection: decode strictly, default,
// prepare and validate as kube-apiserver does, check the namespace, store.
func (s *Server) serveCreate(w http.ResponseWriter, r *http.Request, c *call) {
	params, obj, decodeWarnings, err := s.readDecoded(r, c, "create")
	if err != nil {
		writeError(w, err)
		return
	}
	if c.res.terminating {
		name := ""
		if m, err := meta.Accessor(obj); err == nil {
			name = m.GetName()
		}
		writeError(w, createTerminating(c.res, name))
		return
	}
	warnings := &registry.Warnings{}
	actx := s.withAdmission(r, c, params.options("create"), params.dryRun)
	ctx := c.res.kind.Context(actx, c.info.Namespace, "create", "", warnings)
	obj = s.recordUpdate(c, nil, obj, fieldmanager.ManagerName(params.fieldManager, r.UserAgent()))
	out, err := s.createObject(ctx, c, obj, params.dryRun)
	if err != nil {
		writeError(w, err)
		return
	}
	addWarnings(w, append(decodeWarnings, warnings.List()...))
	writeWritten(w, r, c, http.StatusCreated, out)
}

// createTerminating refuses the create of a custom resource whose CRD is
// being deleted, as the admission apiextensions-apiserver adds then
// (forbidCreateAdmission): 403 naming the object.
func createTerminating(res *resource, name string) error {
	return apierrors.NewForbidden(res.kind.GroupResource(), name,
		errors.New("create not allowed while custom resource definition is terminating"))
}

// prepareCreate turns a decoded object into the one to store (the kind's
// create strategy and validation) and checks that its namespace takes new
// objects. ctx comes from the kind's Context for "create".
func (s *Server) prepareCreate(ctx context.Context, c *call, obj runtime.Object) (*registry.Prepared, error) {
	kind := c.res.kind
	prepared, err := kind.PrepareCreate(ctx, obj)
	if err != nil {
		return nil, err
	}
	if kind.Namespaced && !s.cfg.WithoutNamespaceLifecycle {
		if err := s.checkNamespaceWritable(ctx, c.info.Namespace, kind.GroupResource(), prepared.GetName()); err != nil {
			return nil, err
		}
	}
	return prepared, nil
}

// storeCreate stores a prepared object, or with dryRun returns it as it
// would be stored.
func (s *Server) storeCreate(ctx context.Context, c *call, u *unstructured.Unstructured, dryRun bool) (*unstructured.Unstructured, error) {
	if dryRun {
		return u, nil
	}
	return c.res.store.Create(ctx, u)
}
