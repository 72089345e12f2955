package registry

import (
	"context"
	"errors"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// Allocator is the contract of a kind whose objects hold something outside
// themselves that the server hands out (a Service's cluster IPs and node
// ports): kube-apiserver's BeginCreate, BeginUpdate and AfterDelete store
// hooks. Objects are the kind's internal type.
type Allocator interface {
	// BeginCreate allocates what obj asks for (or needs) and fills it in;
	// the returned function commits (true) or reverts (false) it. With
	// dryRun nothing is held: values are checked and picked only.
	BeginCreate(ctx context.Context, obj runtime.Object, dryRun bool) (func(success bool), error)
	// BeginUpdate does the same for an update of old to obj: committing
	// releases what obj no longer uses.
	BeginUpdate(ctx context.Context, obj, old runtime.Object, dryRun bool) (func(success bool), error)
	// Release frees what a deleted object held.
	Release(obj runtime.Object)
}

// AllocatesServiceAddresses says whether the kind's objects hold cluster
// IPs and node ports, which the server's Allocator hands out (Services).
func (k *Kind) AllocatesServiceAddresses() bool { return k.serviceAddresses }

// SetAllocator makes the kind's creates and updates allocate with a, and
// its deletes release; see WithAllocation.
func (k *Kind) SetAllocator(a Allocator) { k.allocator = a }

// Allocation is what one write has allocated and not yet committed. The
// caller of PrepareCreate or PrepareUpdate finishes it once it knows
// whether the object was stored: a write that fails holds nothing.
type Allocation struct {
	dryRun bool
	mu     sync.Mutex
	finish func(success bool)
}

type allocationKey struct{}

// WithAllocation returns a context under which PrepareCreate and
// PrepareUpdate of a kind with an Allocator allocate into the returned
// Allocation; with dryRun they hold nothing. Finish must be called.
func WithAllocation(ctx context.Context, dryRun bool) (context.Context, *Allocation) {
	a := &Allocation{dryRun: dryRun}
	return context.WithValue(ctx, allocationKey{}, a), a
}

// Finish commits the allocation of the last preparation (success) or
// reverts it. Once finished, later calls do nothing.
func (a *Allocation) Finish(success bool) {
	a.set(nil, success)
}

// set replaces the pending allocation with finish, reverting the one it
// replaces, or finishing it with success when finish is nil.
func (a *Allocation) set(finish func(bool), success bool) {
	a.mu.Lock()
	prev := a.finish
	a.finish = finish
	a.mu.Unlock()
	if prev != nil {
		prev(finish == nil && success)
	}
}

// errNoAllocation is a programming error: a write of a kind with an
// Allocator was prepared without WithAllocation, so nothing would release
// what it allocated.
var errNoAllocation = errors.New("registry: a write of a kind with an allocator needs WithAllocation")

// beginCreate runs the kind's allocator, if any, for a create.
func (k *Kind) beginCreate(ctx context.Context, obj runtime.Object) error {
	return k.begin(ctx, func(a Allocator, dryRun bool) (func(bool), error) {
		return a.BeginCreate(ctx, obj, dryRun)
	})
}

// beginUpdate runs the kind's allocator, if any, for an update.
func (k *Kind) beginUpdate(ctx context.Context, obj, old runtime.Object) error {
	return k.begin(ctx, func(a Allocator, dryRun bool) (func(bool), error) {
		return a.BeginUpdate(ctx, obj, old, dryRun)
	})
}

// begin allocates into the context's Allocation. What an earlier
// preparation of the same write holds is reverted first: a guaranteed
// update prepares again after a lost race and must find free what it
// asked for the first time.
func (k *Kind) begin(ctx context.Context, start func(Allocator, bool) (func(bool), error)) error {
	if k.allocator == nil {
		return nil
	}
	a, ok := ctx.Value(allocationKey{}).(*Allocation)
	if !ok {
		return apierrors.NewInternalError(errNoAllocation)
	}
	a.set(nil, false)
	finish, err := start(k.allocator, a.dryRun)
	if err != nil {
		return err
	}
	a.set(finish, false)
	return nil
}

// Release frees what a deleted object (as the store returned it) held;
// nothing for a kind without an Allocator.
func (k *Kind) Release(u *unstructured.Unstructured) error {
	if k.allocator == nil || u == nil {
		return nil
	}
	internal, err := k.internalOf(u)
	if err != nil {
		return err
	}
	k.allocator.Release(internal)
	return nil
}
