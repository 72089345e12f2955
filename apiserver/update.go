package apiserver

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/stratadev/strata/fieldmanager"
	"github.com/stratadev/strata/registry"
	"github.com/stratadev/strata/storage"
)

// errModified is kube-apiserver's conflict reason for a stale resourceVersion.
var errModified = errors.New("the object has been modified; please apply your changes to the latest version and try again")

// serveUpdate answers PUT of an object or its status: compare-and-swap when
// the body carries a resourceVersion (stale is 409), unconditional without.
func (s *Server) serveUpdate(w http.ResponseWriter, r *http.Request, c *call) {
	params, obj, decodeWarnings, err := s.readDecoded(r, c, "update")
	if err != nil {
		writeError(w, err)
		return
	}
	kind := c.res.kind
	if err := checkNameMatches(obj, c); err != nil {
		writeError(w, err)
		return
	}
	warnings := &registry.Warnings{}
	actx := s.withAdmission(r, c, params.options("update"), params.dryRun)
	ctx := kind.Context(actx, c.info.Namespace, "update", c.info.Subresource, warnings)
	manager := fieldmanager.ManagerName(params.fieldManager, r.UserAgent())
	out, err := s.update(ctx, c, params.dryRun, func(cur *registry.Current) (runtime.Object, error) {
		return s.recordUpdate(c, cur.Live(), obj.DeepCopyObject(), manager), nil
	})
	if err != nil {
		writeError(w, err)
		return
	}
	addWarnings(w, append(decodeWarnings, warnings.List()...))
	writeWritten(w, r, c, http.StatusOK, out)
}

// newObjectFunc computes the object an update or patch proposes, from the
// current state.
type newObjectFunc func(cur *registry.Current) (runtime.Object, error)

// update runs one update or patch through the store's guaranteed update:
// the proposal is checked against the current resourceVersion, prepared and
// validated by the kind's strategy (or its status strategy), and written
// if it changes anything. An update that leaves a deleted object without
// finalizers removes it.
func (s *Server) update(ctx context.Context, c *call, dryRun bool, propose newObjectFunc) (written, error) {
	kind, subresource := c.res.kind, c.info.Subresource
	if subresource == "scale" {
		// A Scale's write is an update of the object through its strategy.
		subresource = ""
	}
	var last *registry.Prepared // of the last try, which the store answers unless unchanged
	try := func(stored *unstructured.Unstructured) (*unstructured.Unstructured, error) {
		cur := kind.Current(stored)
		obj, err := propose(cur)
		if err != nil {
			return nil, err
		}
		if rv := resourceVersionOf(obj); rv != "" && rv != cur.GetResourceVersion() {
			if _, errs := storage.ParseResourceVersion(field.NewPath("metadata", "resourceVersion"), rv); errs != nil {
				// Not a stale version but none at all (kube-apiserver
				// answers 500 with the parse error).
				return nil, apierrors.NewBadRequest(errs.ToAggregate().Error())
			}
			return nil, apierrors.NewConflict(kind.GroupResource(), c.info.Name, errModified)
		}
		prepared, err := kind.PrepareUpdate(ctx, obj, cur, subresource)
		if err != nil {
			return nil, err
		}
		last = prepared
		return prepared.Unstructured, nil
	}
	// What a preparation allocates is kept only if its result is stored.
	ctx, alloc := registry.WithAllocation(ctx, dryRun)
	if dryRun {
		cur, err := c.res.store.Get(ctx, c.info.Namespace, c.info.Name, storage.GetOptions{})
		if err != nil {
			return written{}, err
		}
		out, err := try(cur.DeepCopy())
		alloc.Finish(err == nil)
		return writtenOf(out, last), err
	}
	out, err := c.res.store.GuaranteedUpdate(ctx, c.info.Namespace, c.info.Name, nil, try)
	alloc.Finish(err == nil)
	if err != nil {
		return written{}, err
	}
	if out.GetDeletionTimestamp() != nil && len(out.GetFinalizers()) == 0 && !s.heldBySpecFinalizers(c.res, out) {
		pre := &storage.Preconditions{ResourceVersion: out.GetResourceVersion()}
		if _, err := s.deleteObject(ctx, c.res, c.info.Namespace, c.info.Name, pre); err != nil &&
			!errors.Is(err, storage.ErrNotFound) && !errors.Is(err, storage.ErrConflict) {
			return written{}, err
		}
	}
	return writtenOf(out, last), nil
}

// heldBySpecFinalizers: a namespace also stays while its spec.finalizers
// are not empty (upstream's ShouldDeleteNamespaceDuringUpdate); an
// update of namespaces/finalize that empties them removes it.
func (s *Server) heldBySpecFinalizers(res *resource, obj *unstructured.Unstructured) bool {
	if res != s.namespaces {
		return false
	}
	finalizers, _, _ := unstructured.NestedStringSlice(obj.Object, "spec", "finalizers")
	return len(finalizers) > 0
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

func resourceVersionOf(obj runtime.Object) string {
	if m, ok := obj.(interface{ GetResourceVersion() string }); ok {
		return m.GetResourceVersion()
	}
	return ""
}
