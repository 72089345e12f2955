package registry

import (
	"context"
	"fmt"

	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/apiserver/pkg/warning"
	authenticationapi "k8s.io/kubernetes/pkg/apis/authentication"

	// authentication.k8s.io's types, defaults (expirationSeconds 3600)
	// and conversions, for TokenRequest bodies.
	_ "k8s.io/kubernetes/pkg/apis/authentication/install"
)

var tokenRequestGVK = authenticationv1.SchemeGroupVersion.WithKind("TokenRequest")

// TokenRequestKind describes the body of a serviceaccounts/token create.
func TokenRequestKind() *Kind {
	return &Kind{GVK: tokenRequestGVK, Resource: "serviceaccounts/token", Namespaced: true}
}

// DecodeTokenRequest reads the body of a serviceaccounts/token create: an
// authentication.k8s.io/v1 TokenRequest, defaulted and converted to the
// internal type upstream's TokenREST takes.
func DecodeTokenRequest(body []byte, fv FieldValidation) (*authenticationapi.TokenRequest, []string, error) {
	k := TokenRequestKind()
	obj, warnings, err := k.Decode(body, fv)
	if err != nil {
		return nil, nil, err
	}
	internal, err := toInternal(obj, k.GVK)
	if err != nil {
		return nil, nil, apierrors.NewInternalError(err)
	}
	return internal.(*authenticationapi.TokenRequest), warnings, nil
}

// TokenRequestV1 converts the TokenRequest TokenREST returns to the
// served authentication.k8s.io/v1 type, with its kind and apiVersion.
func TokenRequestV1(obj runtime.Object) (*authenticationv1.TokenRequest, error) {
	out := &authenticationv1.TokenRequest{}
	if err := Scheme.Convert(obj, out, nil); err != nil {
		return nil, fmt.Errorf("registry: converting TokenRequest to v1: %w", err)
	}
	out.SetGroupVersionKind(tokenRequestGVK)
	return out, nil
}

// tokenREST serves serviceaccounts/token with upstream's TokenREST (package
// satoken builds it), as kube-apiserver's create handler calls it: the
// body is an authentication.k8s.io/v1 TokenRequest, defaulted; a
// namespace in it must be the URL's; the namespace travels in the
// context; TokenREST's warnings (an expiration shortened to the maximum)
// are the answer's; the answer is the TokenRequest with its token.
type tokenREST struct {
	rest rest.NamedCreater
}

func (t *tokenREST) BodyKind() *Kind { return TokenRequestKind() }

func (t *tokenREST) Create(ctx context.Context, req *CreateRequest) (runtime.Object, []string, error) {
	tr, warnings, err := DecodeTokenRequest(req.Body, req.FieldValidation)
	if err != nil {
		return nil, nil, err
	}
	if tr.Namespace != "" && tr.Namespace != req.Namespace {
		return nil, nil, apierrors.NewBadRequest("the namespace of the provided object does not match the namespace sent on the request")
	}
	rec := &Warnings{}
	ctx = genericapirequest.WithNamespace(ctx, req.Namespace)
	ctx = warning.WithWarningRecorder(ctx, rec)
	var dryRun []string
	if req.DryRun {
		dryRun = []string{metav1.DryRunAll}
	}
	out, err := t.rest.Create(ctx, req.Name, tr, nil, &metav1.CreateOptions{DryRun: dryRun})
	if err != nil {
		return nil, nil, err
	}
	v1, err := TokenRequestV1(out)
	if err != nil {
		return nil, nil, apierrors.NewInternalError(err)
	}
	return v1, append(warnings, rec.List()...), nil
}
