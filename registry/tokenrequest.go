package registry

import (
	"fmt"

	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
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
