package apiserver

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversionscheme "k8s.io/apimachinery/pkg/apis/meta/internalversion/scheme"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	metavalidation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/stratadev/strata/registry"
	"github.com/stratadev/strata/storage"
)

// serveDelete answers DELETE of one object. Without finalizers the object
// goes and the answer is a Success Status naming it; with finalizers it
// gets a deletionTimestamp and is returned, and goes when an update removes
// its last finalizer. A namespace is marked Terminating and emptied in the
// background (namespaces.go).
func (s *Server) serveDelete(w http.ResponseWriter, r *http.Request, c *call) {
	opts, err := s.deleteOptions(r)
	if err != nil {
		writeError(w, err)
		return
	}
	if unsafeDelete(opts) {
		s.serveUnsafeDelete(w, r, c, opts)
		return
	}
	if c.res == s.namespaces && !s.cfg.WithoutNamespaceLifecycle {
		if err := checkNamespaceDeletable(c.info.Name); err != nil {
			writeError(w, err)
			return
		}
	}
	out, deleted, err := s.deleteOne(s.withAdmission(r, c, opts, len(opts.DryRun) > 0), c.res, c.info.Namespace, c.info.Name, opts)
	if err != nil {
		writeError(w, err)
		return
	}
	if !deleted {
		// kube-apiserver's delete handler answers 202 to the deprecated
		// orphanDependents=false when the object stays, and 200 otherwise.
		code := http.StatusOK
		//nolint:staticcheck // SA1019: as upstream's handler
		if o := opts.OrphanDependents; o != nil && !*o {
			code = http.StatusAccepted
		}
		writeWritten(w, r, c, code, written{Unstructured: out})
		return
	}
	gr := c.res.kind.GroupResource()
	writeResult(w, c, http.StatusOK, &metav1.Status{
		TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   metav1.StatusSuccess,
		Details:  &metav1.StatusDetails{Name: out.GetName(), Group: gr.Group, Kind: gr.Resource, UID: out.GetUID()},
	})
}

// deleteOne deletes (or marks for deletion) one object, as kube-apiserver's
// generic store does with garbage collection enabled: the propagation
// policy (or orphanDependents, or the kind's default) sets the orphan or
// foregroundDeletion finalizer, which the garbage collector removes; an
// object with finalizers gets a deletionTimestamp and stays. deleted says
// whether it is gone.
func (s *Server) deleteOne(ctx context.Context, res *resource, ns, name string, opts *metav1.DeleteOptions) (*unstructured.Unstructured, bool, error) {
	dryRun := len(opts.DryRun) > 0
	var pre *storage.Preconditions
	if p := opts.Preconditions; p != nil {
		pre = &storage.Preconditions{}
		if p.UID != nil {
			pre.UID = *p.UID
		}
		if p.ResourceVersion != nil {
			pre.ResourceVersion = *p.ResourceVersion
		}
	}
	cur, err := res.store.Get(ctx, ns, name, storage.GetOptions{})
	if err != nil {
		return nil, false, err
	}
	if err := checkDeletePreconditions(res.kind.GVK, cur, opts.Preconditions); err != nil {
		return nil, false, err
	}
	if err := res.kind.AdmitDelete(ctx, cur); err != nil {
		return nil, false, err
	}
	gcCtx := res.kind.Context(ctx, ns, "delete", "", nil)
	changeFinalizers, _ := res.kind.GCFinalizers(gcCtx, cur, opts)
	if res == s.namespaces || res.kind.DeleteFinalizer() != "" || len(cur.GetFinalizers()) > 0 || changeFinalizers {
		out, err := s.markDeleted(gcCtx, res, ns, name, pre, opts)
		if !errors.Is(err, errDeleteNow) {
			return out, false, err
		}
	}
	if dryRun {
		if err := pre.Check(res.kind.GroupResource(), cur); err != nil {
			return nil, false, err
		}
		return cur, true, nil
	}
	out, err := s.deleteObject(ctx, res, ns, name, pre)
	return out, err == nil, err
}

// errDeleteNow: the delete leaves the object no finalizer, so it goes at
// once (the generic store's error of that name).
var errDeleteNow = errors.New("delete now")

// markDeleted sets the finalizers the delete options ask for and
// deletionTimestamp (once) on an object finalizers hold; for a namespace
// it also sets phase Terminating and starts emptying. It returns
// errDeleteNow when no finalizer is left.
func (s *Server) markDeleted(ctx context.Context, res *resource, ns, name string, pre *storage.Preconditions, opts *metav1.DeleteOptions) (*unstructured.Unstructured, error) {
	mark := func(cur *unstructured.Unstructured) (*unstructured.Unstructured, error) {
		// The kind's own finalizer first: a CRD's storage adds it and then
		// lets the generic store add the collector's.
		if f := res.kind.DeleteFinalizer(); f != "" && !slices.Contains(cur.GetFinalizers(), f) {
			cur.SetFinalizers(append(cur.GetFinalizers(), f))
		}
		switch {
		case res == s.namespaces && cur.GetDeletionTimestamp() == nil:
			if next := registry.NamespaceGCFinalizers(cur, opts); !slices.Equal(next, cur.GetFinalizers()) {
				cur.SetFinalizers(next)
			}
		case res != s.namespaces:
			if change, finalizers := res.kind.GCFinalizers(ctx, cur, opts); change {
				cur.SetFinalizers(finalizers)
			}
		}
		if res != s.namespaces && len(cur.GetFinalizers()) == 0 {
			return nil, errDeleteNow
		}
		markAsDeleting(cur, time.Now())
		if res == s.namespaces {
			if err := unstructured.SetNestedField(cur.Object, "Terminating", "status", "phase"); err != nil {
				return nil, apierrors.NewInternalError(err)
			}
		}
		return cur, nil
	}
	if len(opts.DryRun) > 0 {
		cur, err := res.store.Get(ctx, ns, name, storage.GetOptions{})
		if err != nil {
			return nil, err
		}
		if err := pre.Check(res.kind.GroupResource(), cur); err != nil {
			return nil, err
		}
		return mark(cur.DeepCopy())
	}
	out, err := res.store.GuaranteedUpdate(ctx, ns, name, pre, mark)
	if err != nil {
		return nil, err
	}
	if res == s.namespaces {
		s.finalizeNamespaceLater(name)
	}
	return out, nil
}

// markAsDeleting mirrors the generic store's function of that name
// (k8s.io/apiserver/pkg/registry/generic/registry/store.go): the first
// mark bumps a set generation; deletionTimestamp is set unless an earlier
// one is; the grace period is 0.
func markAsDeleting(obj *unstructured.Unstructured, now time.Time) {
	if obj.GetDeletionTimestamp() == nil && obj.GetGeneration() > 0 {
		obj.SetGeneration(obj.GetGeneration() + 1)
	}
	if ts := obj.GetDeletionTimestamp(); ts == nil || ts.After(now) {
		t := metav1.NewTime(now.Truncate(time.Second))
		obj.SetDeletionTimestamp(&t)
	}
	zero := int64(0)
	obj.SetDeletionGracePeriodSeconds(&zero)
}

// deleteOptions reads DeleteOptions from the body (if any) and the query.
func (s *Server) deleteOptions(r *http.Request) (*metav1.DeleteOptions, error) {
	body, err := s.readBody(r)
	if err != nil {
		return nil, err
	}
	opts, err := registry.DecodeDeleteOptions(body, r.Header.Get("Content-Type"))
	if err != nil {
		return nil, err
	}
	if err := queryDeleteOptions(r.URL.Query(), opts); err != nil {
		return nil, err
	}
	if errs := metavalidation.ValidateDeleteOptions(opts); len(errs) > 0 {
		return nil, apierrors.NewInvalid(schema.GroupKind{Group: metav1.GroupName, Kind: "DeleteOptions"}, "", errs)
	}
	return opts, nil
}

func queryDeleteOptions(q url.Values, opts *metav1.DeleteOptions) error {
	if len(q) == 0 {
		return nil
	}
	var fromQuery metav1.DeleteOptions
	if err := metainternalversionscheme.ParameterCodec.DecodeParameters(q, metav1.SchemeGroupVersion, &fromQuery); err != nil {
		return apierrors.NewBadRequest(err.Error())
	}
	if fromQuery.PropagationPolicy != nil {
		opts.PropagationPolicy = fromQuery.PropagationPolicy
	}
	//nolint:staticcheck // SA1019: kube-apiserver still honours orphanDependents
	if fromQuery.OrphanDependents != nil {
		opts.OrphanDependents = fromQuery.OrphanDependents //nolint:staticcheck // as above
	}
	if fromQuery.GracePeriodSeconds != nil {
		opts.GracePeriodSeconds = fromQuery.GracePeriodSeconds
	}
	if len(fromQuery.DryRun) > 0 {
		opts.DryRun = fromQuery.DryRun
	}
	if fromQuery.IgnoreStoreReadErrorWithClusterBreakingPotential != nil {
		opts.IgnoreStoreReadErrorWithClusterBreakingPotential = fromQuery.IgnoreStoreReadErrorWithClusterBreakingPotential
	}
	return nil
}
