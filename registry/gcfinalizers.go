package registry

import (
	"context"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apiserver/pkg/registry/rest"
)

// GCFinalizers returns the finalizers a delete with options leaves on obj
// for the garbage collector (orphan, foregroundDeletion) and whether they
// differ from obj's: kube-apiserver's generic store with garbage collection
// enabled, deletionFinalizersForGarbageCollection (unexported in
// k8s.io/apiserver/pkg/registry/generic/registry/store.go, mirrored here).
// ctx comes from Context: some kinds' default policy depends on the
// request's version (batch/v1 Jobs orphan by default).
func (k *Kind) GCFinalizers(ctx context.Context, obj metav1.Object, options *metav1.DeleteOptions) (bool, []string) {
	policy := k.gcPolicy(ctx)
	orphan := shouldOrphanDependents(policy, obj, options)
	foreground := shouldDeleteDependentsInForeground(policy, obj, options)
	next := withGCFinalizers(obj.GetFinalizers(), orphan, foreground)
	if sets.New(obj.GetFinalizers()...).Equal(sets.New(next...)) {
		return false, obj.GetFinalizers()
	}
	return true, next
}

// gcPolicy is the kind's strategy's DefaultGarbageCollectionPolicy, empty
// when it has none (most kinds: background).
func (k *Kind) gcPolicy(ctx context.Context) rest.GarbageCollectionPolicy {
	if gc, ok := k.strategy.(rest.GarbageCollectionDeleteStrategy); ok {
		return gc.DefaultGarbageCollectionPolicy(ctx)
	}
	return ""
}

// shouldOrphanDependents mirrors the generic store's function of that name:
// options first, then the object's finalizers, then the kind's default.
func shouldOrphanDependents(policy rest.GarbageCollectionPolicy, obj metav1.Object, options *metav1.DeleteOptions) bool {
	if policy == rest.Unsupported {
		return false
	}
	//nolint:staticcheck // SA1019: upstream still honours orphanDependents
	if options.OrphanDependents != nil {
		return *options.OrphanDependents //nolint:staticcheck // as above
	}
	if p := options.PropagationPolicy; p != nil {
		switch *p {
		case metav1.DeletePropagationOrphan:
			return true
		case metav1.DeletePropagationBackground, metav1.DeletePropagationForeground:
			return false
		}
	}
	if f, ok := firstGCFinalizer(obj); ok {
		return f == metav1.FinalizerOrphanDependents
	}
	return policy == rest.OrphanDependents
}

// shouldDeleteDependentsInForeground mirrors the generic store's function
// of that name; a kind's default is never foreground.
func shouldDeleteDependentsInForeground(policy rest.GarbageCollectionPolicy, obj metav1.Object, options *metav1.DeleteOptions) bool {
	if policy == rest.Unsupported {
		return false
	}
	//nolint:staticcheck // SA1019: upstream still honours orphanDependents
	if options.OrphanDependents != nil {
		return false
	}
	if p := options.PropagationPolicy; p != nil {
		switch *p {
		case metav1.DeletePropagationForeground:
			return true
		case metav1.DeletePropagationBackground, metav1.DeletePropagationOrphan:
			return false
		}
	}
	if f, ok := firstGCFinalizer(obj); ok {
		return f == metav1.FinalizerDeleteDependents
	}
	return false
}

// firstGCFinalizer is the first of obj's orphan and foregroundDeletion
// finalizers: upstream's loops stop at the first of the two they meet.
func firstGCFinalizer(obj metav1.Object) (string, bool) {
	i := slices.IndexFunc(obj.GetFinalizers(), func(f string) bool {
		return f == metav1.FinalizerOrphanDependents || f == metav1.FinalizerDeleteDependents
	})
	if i < 0 {
		return "", false
	}
	return obj.GetFinalizers()[i], true
}

// NamespaceGCFinalizers returns the finalizers the first delete of a
// namespace leaves on it: kube-apiserver's namespace storage
// (pkg/registry/core/namespace/storage: shouldHaveOrphanFinalizer and
// shouldHaveDeleteDependentsFinalizer, unexported there, mirrored here),
// where orphanDependents=false asks for foregroundDeletion. Upstream
// builds the list from a map, in no fixed order; here the finalizers kept
// come first, then orphan, then foregroundDeletion.
func NamespaceGCFinalizers(obj metav1.Object, options *metav1.DeleteOptions) []string {
	orphan := slices.Contains(obj.GetFinalizers(), metav1.FinalizerOrphanDependents)
	foreground := slices.Contains(obj.GetFinalizers(), metav1.FinalizerDeleteDependents)
	//nolint:staticcheck // SA1019: upstream still honours orphanDependents
	if o := options.OrphanDependents; o != nil {
		orphan, foreground = *o, !*o
	} else if p := options.PropagationPolicy; p != nil {
		orphan, foreground = *p == metav1.DeletePropagationOrphan, *p == metav1.DeletePropagationForeground
	}
	return withGCFinalizers(obj.GetFinalizers(), orphan, foreground)
}

// withGCFinalizers is finalizers with the orphan and foregroundDeletion
// finalizers set as orphan and foreground say, the others kept in order.
func withGCFinalizers(finalizers []string, orphan, foreground bool) []string {
	next := []string{}
	for _, f := range finalizers {
		if f != metav1.FinalizerOrphanDependents && f != metav1.FinalizerDeleteDependents {
			next = append(next, f)
		}
	}
	if orphan {
		next = append(next, metav1.FinalizerOrphanDependents)
	}
	if foreground {
		next = append(next, metav1.FinalizerDeleteDependents)
	}
	return next
}
