package registry

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	upstreamadmission "k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/authentication/user"
)

// Admission is what a write passes on its way in: kube-apiserver's
// admission chain (package admission builds it from the upstream
// plugins). The kind's preparation calls it where kube-apiserver's
// handlers and generic store do: Admit (the mutating plugins) on the
// decoded object before the strategy prepares it, Validate (the
// validating plugins, which may only refuse) on the prepared object.
// Objects are the kind's internal form (an unstructured object for a
// custom resource); old is nil on create, obj nil on delete.
type Admission interface {
	Admit(ctx context.Context, op upstreamadmission.Operation, req *AdmissionRequest, obj, old runtime.Object) error
	Validate(ctx context.Context, op upstreamadmission.Operation, req *AdmissionRequest, obj, old runtime.Object) error
}

// AdmissionRequest is what the admission chain is told about one request
// besides the objects (admission.Attributes without them).
type AdmissionRequest struct {
	Kind        schema.GroupVersionKind
	Resource    schema.GroupVersionResource
	Subresource string
	Namespace   string
	// Name is the request's; a create names the object in its body.
	Name string
	// Options is the request's CreateOptions, UpdateOptions, PatchOptions
	// or DeleteOptions, as webhooks receive them.
	Options runtime.Object
	DryRun  bool
	User    user.Info
	// Versions are the kinds of a custom resource's served versions
	// (Kind.ServedVersions): the equivalent resources of matchPolicy
	// Equivalent. The chain knows the built-in kinds' itself.
	Versions []schema.GroupVersionKind
}

// Admitting is the admission chain bound to one request: the objects a
// write prepares with it pass the chain, as upstream's handlers pass their
// create and update validation functions to the generic store. nil admits
// everything: writes the server makes on its own behalf (the default
// namespaces, a PodDisruptionBudget's status during an eviction) pass no
// admission, as in kube-apiserver, where they write through storage.
type Admitting struct {
	chain Admission
	req   *AdmissionRequest
}

// Bind binds the chain a (nil: none) to one request.
func Bind(a Admission, req *AdmissionRequest) *Admitting {
	if a == nil {
		return nil
	}
	return &Admitting{chain: a, req: req}
}

// admit runs the mutating plugins, if any.
func (b *Admitting) admit(ctx context.Context, op upstreamadmission.Operation, obj, old runtime.Object) error {
	if b == nil {
		return nil
	}
	return b.chain.Admit(ctx, op, b.req, obj, old)
}

// validate runs the validating plugins, if any.
func (b *Admitting) validate(ctx context.Context, op upstreamadmission.Operation, obj, old runtime.Object) error {
	if b == nil {
		return nil
	}
	return b.chain.Validate(ctx, op, b.req, obj, old)
}

// admitDelete runs admission for a delete of cur (its stored form): the
// mutating plugins without objects, then the validating ones with cur as
// the old object, as kube-apiserver's delete handler and generic store do.
func (k *Kind) admitDelete(ctx context.Context, b *Admitting, cur *unstructured.Unstructured) error {
	if b == nil {
		return nil
	}
	// A collection's delete names each object in turn.
	req := *b.req
	req.Namespace, req.Name = cur.GetNamespace(), cur.GetName()
	if err := b.chain.Admit(ctx, upstreamadmission.Delete, &req, nil, nil); err != nil {
		return err
	}
	old, err := k.internalOf(cur)
	if err != nil {
		return apierrors.NewInternalError(err)
	}
	return b.chain.Validate(ctx, upstreamadmission.Delete, &req, nil, old)
}
