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
}

type admissionKey struct{}

type boundAdmission struct {
	a   Admission
	req *AdmissionRequest
}

// WithAdmission returns ctx carrying the admission chain and the request
// it is bound to: the writes prepared under ctx pass it. Writes the server
// makes on its own behalf (defaults, a PodDisruptionBudget's status during
// an eviction) do not carry it, as in kube-apiserver, where they write
// through storage, not through the handlers.
func WithAdmission(ctx context.Context, a Admission, req *AdmissionRequest) context.Context {
	if a == nil {
		return ctx
	}
	return context.WithValue(ctx, admissionKey{}, &boundAdmission{a: a, req: req})
}

// admit runs the mutating plugins bound to ctx, if any.
func admit(ctx context.Context, op upstreamadmission.Operation, obj, old runtime.Object) error {
	b, ok := ctx.Value(admissionKey{}).(*boundAdmission)
	if !ok {
		return nil
	}
	return b.a.Admit(ctx, op, b.req, obj, old)
}

// validate runs the validating plugins bound to ctx, if any.
func validate(ctx context.Context, op upstreamadmission.Operation, obj, old runtime.Object) error {
	b, ok := ctx.Value(admissionKey{}).(*boundAdmission)
	if !ok {
		return nil
	}
	return b.a.Validate(ctx, op, b.req, obj, old)
}

// AdmitDelete runs the admission bound to ctx for a delete of cur (its
// stored form): the mutating plugins without objects, then the validating
// ones with cur as the old object, as kube-apiserver's delete handler and
// generic store do.
func (k *Kind) AdmitDelete(ctx context.Context, cur *unstructured.Unstructured) error {
	b, ok := ctx.Value(admissionKey{}).(*boundAdmission)
	if !ok {
		return nil
	}
	// A collection's delete names each object in turn.
	req := *b.req
	req.Namespace, req.Name = cur.GetNamespace(), cur.GetName()
	if err := b.a.Admit(ctx, upstreamadmission.Delete, &req, nil, nil); err != nil {
		return err
	}
	old, err := k.internalOf(cur)
	if err != nil {
		return apierrors.NewInternalError(err)
	}
	return b.a.Validate(ctx, upstreamadmission.Delete, &req, nil, old)
}
