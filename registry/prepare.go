package registry

import (
	"context"
	"fmt"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	upstreamadmission "k8s.io/apiserver/pkg/admission"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/apiserver/pkg/warning"
)

// Warnings collects the warnings strategies add during one request.
type Warnings struct {
	mu   sync.Mutex
	list []string
}

// AddWarning implements warning.Recorder.
func (w *Warnings) AddWarning(_, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, seen := range w.list {
		if seen == text {
			return
		}
	}
	w.list = append(w.list, text)
}

// List returns the warnings in the order they were added.
func (w *Warnings) List() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.list...)
}

// Context returns the request context the upstream strategies expect: the
// request's namespace, verb information (and the name of the object the
// request in ctx names) and a warning recorder.
func (k *Kind) Context(ctx context.Context, namespace, verb, subresource string, w *Warnings) context.Context {
	var name string
	if prev, ok := genericapirequest.RequestInfoFrom(ctx); ok {
		// The object the request names: RBAC's escalation check asks
		// for "escalate" on it.
		name = prev.Name
	}
	ctx = genericapirequest.WithNamespace(ctx, namespace)
	ctx = genericapirequest.WithRequestInfo(ctx, &genericapirequest.RequestInfo{
		IsResourceRequest: true, Verb: verb, APIGroup: k.GVK.Group, APIVersion: k.GVK.Version,
		Namespace: namespace, Resource: k.Resource, Subresource: subresource, Name: name,
	})
	if w != nil {
		ctx = warning.WithWarningRecorder(ctx, w)
	}
	return ctx
}

// PrepareCreate turns a decoded object (from Decode) into the object to
// store: system metadata, a generated name for generateName, the kind's
// create strategy and its validation, as kube-apiserver's generic store does.
// ctx comes from Context; adm is the request's admission (nil: none).
func (k *Kind) PrepareCreate(ctx context.Context, obj runtime.Object, adm *Admitting) (*Prepared, error) {
	obj, exts := unwrapCRD(obj)
	internal, err := k.toInternal(obj)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	m, err := meta.Accessor(internal)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	if ns, ok := genericapirequest.NamespaceFrom(ctx); ok && m.GetNamespace() == "" && k.Namespaced {
		m.SetNamespace(ns)
	}
	// Mutating admission sees the object as sent (with its namespace), as
	// kube-apiserver's create handler runs it before the store.
	if err := adm.admit(ctx, upstreamadmission.Create, internal, nil); err != nil {
		return nil, err
	}
	if err := k.checkCreate(ctx, internal); err != nil {
		return nil, err
	}
	rest.FillObjectMetaSystemFields(m)
	if m.GetGenerateName() != "" && m.GetName() == "" {
		m.SetName(k.strategy.GenerateName(m.GetGenerateName()))
	}
	m.SetResourceVersion("")
	m.SetDeletionTimestamp(nil)
	m.SetDeletionGracePeriodSeconds(nil)
	// Allocation comes before validation, as kube-apiserver's store calls
	// BeginCreate: the strategy validates the allocated values.
	if err := k.beginCreate(ctx, internal); err != nil {
		return nil, err
	}
	if err := rest.BeforeCreate(k.strategy, ctx, internal); err != nil {
		return nil, err
	}
	if err := adm.validate(ctx, upstreamadmission.Create, internal, nil); err != nil {
		return nil, err
	}
	return k.storedWith(internal, exts)
}

// PrepareUpdate computes the object to store when obj (from Decode)
// replaces current: the update strategy (status kept, generation bumped on
// spec change) and update validation (immutable fields). For a
// subresource ("status", "ephemeralcontainers", ...) the subresource's
// strategy applies instead (for status: spec kept). adm is the request's
// admission (nil: none).
func (k *Kind) PrepareUpdate(ctx context.Context, obj runtime.Object, current *Current, subresource string, adm *Admitting) (*Prepared, error) {
	strategy := k.updateStrategy(subresource)
	if strategy == nil {
		return nil, apierrors.NewNotFound(k.GroupResource(), current.GetName())
	}
	status := subresource == "status"
	obj, exts := unwrapCRD(obj)
	if status && k.keepsSchemaExtensions {
		// The spec, and its schemas' extensions, stay as they are.
		exts = findSchemaExtensions(current.Object)
	}
	internal, err := k.toInternal(obj)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	old, err := current.internal()
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	if err := adm.admit(ctx, upstreamadmission.Update, internal, old); err != nil {
		return nil, err
	}
	if err := k.checkUpdate(ctx, internal, old); err != nil {
		return nil, err
	}
	m, err := meta.Accessor(internal)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	if m.GetNamespace() == "" && k.Namespaced {
		m.SetNamespace(current.GetNamespace())
	}
	if m.GetResourceVersion() == "" {
		if !strategy.AllowUnconditionalUpdate(ctx) {
			return nil, apierrors.NewConflict(k.GroupResource(), current.GetName(),
				fmt.Errorf("metadata.resourceVersion must be specified for an update"))
		}
		m.SetResourceVersion(current.GetResourceVersion())
	}
	// The status subresource allocates nothing (kube-apiserver's status
	// store has no BeginUpdate).
	if !status {
		if err := k.beginUpdate(ctx, internal, old); err != nil {
			return nil, err
		}
	}
	if err := rest.BeforeUpdate(strategy, ctx, internal, old); err != nil {
		return nil, err
	}
	if err := adm.validate(ctx, upstreamadmission.Update, internal, old); err != nil {
		return nil, err
	}
	return k.storedWith(internal, exts)
}

// storedWith is the object to store, with a CRD's schema extensions put
// back. Only the unstructured object holds those; the typed CRD, like its
// protobuf encoding, has no field for them.
func (k *Kind) storedWith(internal runtime.Object, exts []schemaExtension) (*Prepared, error) {
	p, err := k.prepared(internal)
	if err == nil {
		restoreSchemaExtensions(p.Unstructured, exts)
	}
	return p, err
}

// internalOf converts a stored object to the kind's internal type.
func (k *Kind) internalOf(u *unstructured.Unstructured) (runtime.Object, error) {
	if k.custom != nil {
		return u.DeepCopy(), nil
	}
	typed, err := toTyped(u, k.GVK)
	if err != nil {
		return nil, err
	}
	return toInternal(typed, k.GVK)
}

// Typed converts a stored object to the kind's external typed object.
func (k *Kind) Typed(u *unstructured.Unstructured) (runtime.Object, error) {
	if k.custom != nil {
		return u, nil
	}
	return toTyped(u, k.GVK)
}

// toInternal is the form the kind's strategy works on: the internal type
// of a built-in kind, the unstructured object itself for a custom one.
func (k *Kind) toInternal(obj runtime.Object) (runtime.Object, error) {
	if k.custom != nil {
		u, ok := obj.(*unstructured.Unstructured)
		if !ok {
			return nil, fmt.Errorf("registry: %s: want an unstructured object, not %T", k.GVK.Kind, obj)
		}
		return u, nil
	}
	return toInternal(obj, k.GVK)
}

func (k *Kind) stored(internal runtime.Object) (*unstructured.Unstructured, error) {
	p, err := k.prepared(internal)
	if err != nil {
		return nil, err
	}
	return p.Unstructured, nil
}

// prepared is internal as storage keeps it, with the typed object it was
// converted through (a custom kind's object is stored as it is).
func (k *Kind) prepared(internal runtime.Object) (*Prepared, error) {
	if u, ok := internal.(*unstructured.Unstructured); ok && k.custom != nil {
		return &Prepared{Unstructured: u}, nil
	}
	u, typed, err := toUnstructuredTyped(internal, k.GVK)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	return &Prepared{Unstructured: u, typed: typed}, nil
}
