package registry

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/stratadev/strata/storage"
)

// createTerminating refuses the create of a custom resource whose CRD is
// being deleted, as the admission apiextensions-apiserver adds then
// (forbidCreateAdmission): 403 naming the object.
func createTerminating(k *Kind, name string) error {
	return apierrors.NewForbidden(k.GroupResource(), name,
		errors.New("create not allowed while custom resource definition is terminating"))
}

// Delete deletes (or marks for deletion) ns/name, as kube-apiserver's
// generic store does with garbage collection enabled: the propagation
// policy (or orphanDependents, or the kind's default) sets the orphan or
// foregroundDeletion finalizer, which the garbage collector removes; an
// object with finalizers gets a deletionTimestamp and stays. deleted says
// whether it is gone; out is the object as deleted or marked.
func (s *Store) Delete(ctx context.Context, ns, name string, opts *metav1.DeleteOptions, adm *Admitting) (out *unstructured.Unstructured, deleted bool, err error) {
	if s.kind.namespace {
		if err := s.namespaces.checkDeletable(name); err != nil {
			return nil, false, err
		}
	}
	pre := preconditionsOf(opts)
	cur, err := s.storage.Get(ctx, ns, name, storage.GetOptions{})
	if err != nil {
		return nil, false, err
	}
	if err := checkDeletePreconditions(s.kind.GVK, cur, opts.Preconditions); err != nil {
		return nil, false, err
	}
	if err := s.kind.admitDelete(ctx, adm, cur); err != nil {
		return nil, false, err
	}
	gcCtx := s.kind.Context(ctx, ns, "delete", "", nil)
	changeFinalizers, _ := s.kind.GCFinalizers(gcCtx, cur, opts)
	if s.kind.namespace || s.kind.DeleteFinalizer() != "" || len(cur.GetFinalizers()) > 0 || changeFinalizers {
		out, err := s.markDeleted(gcCtx, ns, name, pre, opts)
		if !errors.Is(err, errDeleteNow) {
			return out, false, err
		}
	}
	if len(opts.DryRun) > 0 {
		if err := pre.Check(s.kind.GroupResource(), cur); err != nil {
			return nil, false, err
		}
		return cur, true, nil
	}
	out, err = s.remove(ctx, ns, name, pre)
	return out, err == nil, err
}

// DeleteCollection deletes every object of list (the selectors' match) as
// Delete does one, and returns what was deleted or marked.
func (s *Store) DeleteCollection(ctx context.Context, list *unstructured.UnstructuredList, opts *metav1.DeleteOptions, adm *Admitting) (*unstructured.UnstructuredList, error) {
	out := &unstructured.UnstructuredList{}
	out.SetResourceVersion(list.GetResourceVersion())
	for i := range list.Items {
		item := &list.Items[i]
		obj, _, err := s.Delete(ctx, item.GetNamespace(), item.GetName(), opts, adm)
		if errors.Is(err, storage.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out.Items = append(out.Items, *obj)
	}
	return out, nil
}

// preconditionsOf are the storage's form of a delete's preconditions.
func preconditionsOf(opts *metav1.DeleteOptions) *storage.Preconditions {
	p := opts.Preconditions
	if p == nil {
		return nil
	}
	pre := &storage.Preconditions{}
	if p.UID != nil {
		pre.UID = *p.UID
	}
	if p.ResourceVersion != nil {
		pre.ResourceVersion = *p.ResourceVersion
	}
	return pre
}

// errDeleteNow: the delete leaves the object no finalizer, so it goes at
// once (the generic store's error of that name).
var errDeleteNow = errors.New("delete now")

// markDeleted sets the finalizers the delete options ask for and
// deletionTimestamp (once) on an object finalizers hold; a namespace
// becomes Terminating and is emptied. It returns errDeleteNow when no
// finalizer is left.
func (s *Store) markDeleted(ctx context.Context, ns, name string, pre *storage.Preconditions, opts *metav1.DeleteOptions) (*unstructured.Unstructured, error) {
	mark := func(cur *unstructured.Unstructured) (*unstructured.Unstructured, error) {
		return s.mark(ctx, cur, opts)
	}
	if len(opts.DryRun) > 0 {
		cur, err := s.storage.Get(ctx, ns, name, storage.GetOptions{})
		if err != nil {
			return nil, err
		}
		if err := pre.Check(s.kind.GroupResource(), cur); err != nil {
			return nil, err
		}
		return mark(cur.DeepCopy())
	}
	out, err := s.storage.GuaranteedUpdate(ctx, ns, name, pre, mark)
	if err != nil {
		return nil, err
	}
	if s.kind.namespace {
		s.namespaces.finalizeLater(name)
	}
	return out, nil
}

// mark is markDeleted's change of the current object.
func (s *Store) mark(ctx context.Context, cur *unstructured.Unstructured, opts *metav1.DeleteOptions) (*unstructured.Unstructured, error) {
	// The kind's own finalizer first: a CRD's storage adds it and then
	// lets the generic store add the collector's.
	if f := s.kind.DeleteFinalizer(); f != "" && !slices.Contains(cur.GetFinalizers(), f) {
		cur.SetFinalizers(append(cur.GetFinalizers(), f))
	}
	switch {
	case s.kind.namespace && cur.GetDeletionTimestamp() == nil:
		if next := NamespaceGCFinalizers(cur, opts); !slices.Equal(next, cur.GetFinalizers()) {
			cur.SetFinalizers(next)
		}
	case !s.kind.namespace:
		if change, finalizers := s.kind.GCFinalizers(ctx, cur, opts); change {
			cur.SetFinalizers(finalizers)
		}
		if len(cur.GetFinalizers()) == 0 {
			return nil, errDeleteNow
		}
	}
	markAsDeleting(cur, time.Now())
	if s.kind.namespace {
		// A namespace's spec finalizers hold it while it is emptied.
		if err := unstructured.SetNestedField(cur.Object, "Terminating", "status", "phase"); err != nil {
			return nil, apierrors.NewInternalError(err)
		}
	}
	return cur, nil
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

// heldBySpecFinalizers: a namespace also stays while its spec.finalizers
// are not empty (upstream's ShouldDeleteNamespaceDuringUpdate); an update
// of namespaces/finalize that empties them removes it.
func (s *Store) heldBySpecFinalizers(obj *unstructured.Unstructured) bool {
	if !s.kind.namespace {
		return false
	}
	finalizers, _, _ := unstructured.NestedStringSlice(obj.Object, "spec", "finalizers")
	return len(finalizers) > 0
}

// DeleteCorrupt removes ns/name without reading it, for an object whose
// stored bytes do not decode: no preconditions, finalizers, admission or
// release of what it held, as kube-apiserver's corrupt object deleter.
func (s *Store) DeleteCorrupt(ctx context.Context, ns, name string, dryRun bool) error {
	return s.storage.DeleteCorrupt(ctx, ns, name, dryRun)
}

// checkDeletePreconditions refuses a delete whose preconditions the object
// read does not meet, as kube-apiserver's rest.BeforeDelete does before
// anything else of the delete: 409 on the object's kind (not its
// resource), with BeforeDelete's words. The store checks the same
// preconditions again in its transaction, where a write between the read
// and the delete gets the storage layer's wording, as upstream's does.
func checkDeletePreconditions(kind schema.GroupVersionKind, cur *unstructured.Unstructured, pre *metav1.Preconditions) error {
	if pre == nil {
		return nil
	}
	gr := schema.GroupResource{Group: kind.Group, Resource: kind.Kind}
	if pre.UID != nil && *pre.UID != cur.GetUID() {
		return apierrors.NewConflict(gr, cur.GetName(), fmt.Errorf("the UID in the precondition (%s) does not match the UID in record (%s). The object might have been deleted and then recreated", *pre.UID, cur.GetUID()))
	}
	if pre.ResourceVersion != nil && *pre.ResourceVersion != cur.GetResourceVersion() {
		return apierrors.NewConflict(gr, cur.GetName(), fmt.Errorf("the ResourceVersion in the precondition (%s) does not match the ResourceVersion in record (%s). The object might have been modified", *pre.ResourceVersion, cur.GetResourceVersion()))
	}
	return nil
}
