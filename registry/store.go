package registry

import (
	"context"
	"errors"
	"log/slog"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apimachinery/pkg/watch"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"

	"github.com/stratadev/strata/storage"
)

// Store is one resource's generic store, in the role k8s.io/apiserver's
// registry/generic Store plays there: every verb of the resource over
// storage, with the rules kube-apiserver keeps for all kinds in one place
// (preparation by the kind's strategies, admission, dry run, allocation,
// finalizers and deletion propagation, the namespace rules) and the
// points where a kind's row asks for more (a namespace's deletion, a
// Service's allocations). The HTTP handlers decode a request, call one
// method and encode its answer.
type Store struct {
	kind    *Kind
	storage *storage.Store
	// namespaces keeps the namespace rules; nil in a server without them.
	namespaces *Namespaces
	// terminating: the kind's CRD is being deleted; creates are refused.
	terminating bool
	log         *slog.Logger
	// subresources are the stores of the subresources that are not the
	// object through a strategy of its own (store_subresources.go).
	subresources map[string]Subresource
	// shared is what the server's stores share.
	shared *Shared
	// probe answers reads of a kind that is not stored but probed
	// (componentstatuses); nil for stored kinds.
	probe *ComponentStatuses
}

// NewStore serves kind over st, with what the server's stores share (the
// namespaces' own store registers with its namespace rules).
func NewStore(kind *Kind, st *storage.Store, sh *Shared) *Store {
	log := sh.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Store{kind: kind, storage: st, namespaces: sh.Namespaces, log: log, shared: sh}
	if kind.namespace && sh.Namespaces != nil {
		sh.Namespaces.own(s)
	}
	if kind.probed && sh.EtcdHealth != nil {
		s.probe = kind.NewComponentStatuses(sh.EtcdHealth)
	}
	s.attachSubresources(sh)
	return s
}

// Serving returns a store serving kind over s's storage: a custom
// resource's store when its CRD changes without changing how its objects
// are read. terminating refuses creates while the CRD is being deleted.
func (s *Store) Serving(kind *Kind, terminating bool) *Store {
	c := *s
	c.kind, c.terminating = kind, terminating
	c.attachSubresources(s.shared)
	return &c
}

// Kind is the served kind.
func (s *Store) Kind() *Kind { return s.kind }

// Storage is the storage under the store, for reads and for controllers
// that write below the API's rules (the CRD controller's finalizer).
func (s *Store) Storage() *storage.Store {
	if s == nil {
		return nil
	}
	return s.storage
}

// WriteOptions are a create's, update's or patch's options besides the
// object.
type WriteOptions struct {
	// DryRun answers what would be stored and stores nothing.
	DryRun bool
	// Admission is the request's admission chain; nil admits everything.
	Admission *Admitting
}

// Written is what a create or an update stored (or, on a dry run, would
// store), and the object it was prepared from when the store answered
// that very object (not the unchanged one of a no-op update): its typed
// form encodes as protobuf without a conversion.
type Written struct {
	*unstructured.Unstructured
	Prepared *Prepared
}

// writtenOf pairs out, the storage's answer, with prepared, the object
// the write handed it, if out is that object with its resourceVersion.
func writtenOf(out *unstructured.Unstructured, prepared *Prepared) Written {
	if prepared == nil || prepared.Unstructured != out {
		prepared = nil
	}
	return Written{Unstructured: out, Prepared: prepared}
}

// Create prepares obj (decoded, of the kind) and stores it; what the
// preparation allocated is kept only if it is stored. ctx comes from the
// kind's Context for "create".
func (s *Store) Create(ctx context.Context, obj runtime.Object, opts WriteOptions) (Written, error) {
	if s.terminating {
		name := ""
		if m, err := meta.Accessor(obj); err == nil {
			name = m.GetName()
		}
		return Written{}, createTerminating(s.kind, name)
	}
	ctx, alloc := WithAllocation(ctx, opts.DryRun)
	prepared, err := s.kind.PrepareCreate(ctx, obj, opts.Admission)
	if err == nil && s.kind.Namespaced {
		err = s.namespaces.checkWritable(ctx, genericapirequest.NamespaceValue(ctx), s.kind, prepared.GetName())
	}
	out := (*unstructured.Unstructured)(nil)
	if err == nil {
		out = prepared.Unstructured
		if !opts.DryRun {
			// The storage answers a copy of what it was given, with its
			// resourceVersion.
			out, err = s.storage.Create(ctx, prepared.Unstructured)
		}
	}
	alloc.Finish(err == nil)
	if err != nil {
		return Written{}, err
	}
	return Written{Unstructured: out, Prepared: prepared}, nil
}

// Proposal computes the object an update or patch proposes from the
// current one.
type Proposal func(cur *Current) (runtime.Object, error)

// Update runs one update or patch of ns/name in a guaranteed update: the
// proposal is checked against the current resourceVersion, prepared by
// the kind's update strategy (or subresource's: "status", "finalize",
// ...) and written if it changes anything; a conflict proposes again from
// the newer object. An update that leaves a deleted object without
// finalizers removes it. ctx comes from the kind's Context.
func (s *Store) Update(ctx context.Context, ns, name, subresource string, propose Proposal, opts WriteOptions) (Written, error) {
	var last *Prepared // of the last try, which the storage answers unless unchanged
	try := func(stored *unstructured.Unstructured) (*unstructured.Unstructured, error) {
		cur := s.kind.Current(stored)
		obj, err := propose(cur)
		if err != nil {
			return nil, err
		}
		if err := s.checkResourceVersion(obj, cur, name); err != nil {
			return nil, err
		}
		prepared, err := s.kind.PrepareUpdate(ctx, obj, cur, subresource, opts.Admission)
		if err != nil {
			return nil, err
		}
		last = prepared
		return prepared.Unstructured, nil
	}
	// What a preparation allocates is kept only if its result is stored.
	ctx, alloc := WithAllocation(ctx, opts.DryRun)
	if opts.DryRun {
		cur, err := s.storage.Get(ctx, ns, name, storage.GetOptions{})
		if err != nil {
			return Written{}, err
		}
		out, err := try(cur.DeepCopy())
		alloc.Finish(err == nil)
		return writtenOf(out, last), err
	}
	out, err := s.storage.GuaranteedUpdate(ctx, ns, name, nil, try)
	alloc.Finish(err == nil)
	if err != nil {
		return Written{}, err
	}
	if err := s.deleteIfFinalized(ctx, out); err != nil {
		return Written{}, err
	}
	return writtenOf(out, last), nil
}

// ErrModified is kube-apiserver's conflict reason for a stale
// resourceVersion.
var ErrModified = errors.New("the object has been modified; please apply your changes to the latest version and try again")

// checkResourceVersion refuses a proposal whose resourceVersion is not
// the current object's: 409, or 400 when it is none at all.
func (s *Store) checkResourceVersion(obj runtime.Object, cur *Current, name string) error {
	m, ok := obj.(interface{ GetResourceVersion() string })
	if !ok {
		return nil
	}
	rv := m.GetResourceVersion()
	if rv == "" || rv == cur.GetResourceVersion() {
		return nil
	}
	if _, errs := storage.ParseResourceVersion(field.NewPath("metadata", "resourceVersion"), rv); errs != nil {
		return apierrors.NewBadRequest(errs.ToAggregate().Error())
	}
	return apierrors.NewConflict(s.kind.GroupResource(), name, ErrModified)
}

// deleteIfFinalized removes an object an update left deleted and without
// finalizers, unless its kind holds it longer (a namespace's spec
// finalizers).
func (s *Store) deleteIfFinalized(ctx context.Context, out *unstructured.Unstructured) error {
	if out.GetDeletionTimestamp() == nil || len(out.GetFinalizers()) > 0 || s.heldBySpecFinalizers(out) {
		return nil
	}
	pre := &storage.Preconditions{ResourceVersion: out.GetResourceVersion()}
	_, err := s.remove(ctx, out.GetNamespace(), out.GetName(), pre)
	if errors.Is(err, storage.ErrNotFound) || errors.Is(err, storage.ErrConflict) {
		return nil
	}
	return err
}

// remove deletes an object from storage and releases what it held (a
// Service's cluster IPs and node ports). Every path that removes an
// object goes through it.
func (s *Store) remove(ctx context.Context, ns, name string, pre *storage.Preconditions) (*unstructured.Unstructured, error) {
	out, err := s.storage.Delete(ctx, ns, name, pre)
	if err != nil {
		return out, err
	}
	if err := s.kind.Release(out); err != nil {
		s.log.Error("releasing what a deleted object held", "resource", s.kind.GroupResource().String(),
			"namespace", ns, "name", name, "err", err)
	}
	return out, nil
}

// Get reads ns/name with storage's resourceVersion semantics (a probed
// kind probes).
func (s *Store) Get(ctx context.Context, ns, name string, opts storage.GetOptions) (*unstructured.Unstructured, error) {
	if s.probe != nil {
		return s.probe.Get(ctx, name)
	}
	return s.storage.Get(ctx, ns, name, opts)
}

// List lists the objects of ns ("" for every namespace) that opts select.
func (s *Store) List(ctx context.Context, ns string, opts storage.ListOptions) (*unstructured.UnstructuredList, error) {
	return s.storage.List(ctx, ns, opts)
}

// ListMemos is List with the items' memos, which keep their encodings (a
// probed kind probes, and has none).
func (s *Store) ListMemos(ctx context.Context, ns string, opts storage.ListOptions) (*unstructured.UnstructuredList, []*storage.Memo, error) {
	if s.probe != nil {
		list, err := s.probe.List(ctx, opts.Label, opts.Field)
		return list, nil, err
	}
	return s.storage.ListMemos(ctx, ns, opts)
}

// Watch watches the objects of ns that opts select.
func (s *Store) Watch(ctx context.Context, ns string, opts storage.ListOptions) (watch.Interface, error) {
	return s.storage.Watch(ctx, ns, opts)
}
