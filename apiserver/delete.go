package apiserver

import (
	"context"
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
	if c.res == s.namespaces {
		if err := checkNamespaceDeletable(c.info.Name); err != nil {
			writeError(w, err)
			return
		}
	}
	out, deleted, err := s.deleteOne(r.Context(), c.res, c.info.Namespace, c.info.Name, opts)
	if err != nil {
		writeError(w, err)
		return
	}
	if !deleted {
		writeResult(w, c, http.StatusOK, out.Object)
		return
	}
	gr := c.res.kind.GroupResource()
	writeResult(w, c, http.StatusOK, &metav1.Status{
		TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   metav1.StatusSuccess,
		Details:  &metav1.StatusDetails{Name: out.GetName(), Group: gr.Group, Kind: gr.Resource, UID: out.GetUID()},
	})
}

// deleteOne deletes (or marks for deletion) one object. deleted says
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
	if res == s.namespaces || res.kind.DeleteFinalizer() != "" || len(cur.GetFinalizers()) > 0 {
		return s.markDeleted(ctx, res, ns, name, pre, dryRun)
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

// markDeleted sets deletionTimestamp (once) on an object its finalizers
// hold; for a namespace it also sets phase Terminating and starts emptying.
func (s *Server) markDeleted(ctx context.Context, res *resource, ns, name string, pre *storage.Preconditions, dryRun bool) (*unstructured.Unstructured, bool, error) {
	mark := func(cur *unstructured.Unstructured) (*unstructured.Unstructured, error) {
		if cur.GetDeletionTimestamp() == nil {
			now := metav1.NewTime(time.Now().Truncate(time.Second))
			cur.SetDeletionTimestamp(&now)
			zero := int64(0)
			cur.SetDeletionGracePeriodSeconds(&zero)
		}
		if res == s.namespaces {
			if err := unstructured.SetNestedField(cur.Object, "Terminating", "status", "phase"); err != nil {
				return nil, apierrors.NewInternalError(err)
			}
		}
		if f := res.kind.DeleteFinalizer(); f != "" && !slices.Contains(cur.GetFinalizers(), f) {
			cur.SetFinalizers(append(cur.GetFinalizers(), f))
		}
		return cur, nil
	}
	if dryRun {
		cur, err := res.store.Get(ctx, ns, name, storage.GetOptions{})
		if err != nil {
			return nil, false, err
		}
		if err := pre.Check(res.kind.GroupResource(), cur); err != nil {
			return nil, false, err
		}
		out, err := mark(cur.DeepCopy())
		return out, false, err
	}
	out, err := res.store.GuaranteedUpdate(ctx, ns, name, pre, mark)
	if err != nil {
		return nil, false, err
	}
	if res == s.namespaces {
		s.finalizeNamespaceLater(name)
	}
	return out, false, nil
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
