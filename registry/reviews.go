package registry

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/request/bearertoken"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/authorization/authorizerfactory"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"

	"k8s.io/kubernetes/pkg/registry/authentication/selfsubjectreview"
	"k8s.io/kubernetes/pkg/registry/authentication/tokenreview"
	"k8s.io/kubernetes/pkg/registry/authorization/localsubjectaccessreview"
	"k8s.io/kubernetes/pkg/registry/authorization/selfsubjectaccessreview"
	"k8s.io/kubernetes/pkg/registry/authorization/selfsubjectrulesreview"
	"k8s.io/kubernetes/pkg/registry/authorization/subjectaccessreview"
)

var (
	authnv1 = schema.GroupVersion{Group: "authentication.k8s.io", Version: "v1"}
	authzv1 = schema.GroupVersion{Group: "authorization.k8s.io", Version: "v1"}
)

// createOnly are the verbs of a review.
var createOnly = []string{"create"}

// reviews are the authentication.k8s.io and authorization.k8s.io kinds a
// client creates to ask a question (may this user do this? who am I? whom
// does this token name?): kube-apiserver answers them with the REST of
// k8s.io/kubernetes/pkg/registry/{authentication,authorization}/<kind> and
// stores nothing. Each is a row of the kind table (Builtin adds them to
// builtin's) with a review function that builds that REST over the
// server's Reviewers.
var reviews = []Kind{
	{GVK: authnv1.WithKind("SelfSubjectReview"), Resource: "selfsubjectreviews", verbs: createOnly,
		review: func(Reviewers) rest.Creater { return selfsubjectreview.NewREST() }},
	{GVK: authnv1.WithKind("TokenReview"), Resource: "tokenreviews", verbs: createOnly,
		review: func(rv Reviewers) rest.Creater {
			var a authenticator.Request
			if rv.TokenAuthenticator != nil {
				a = bearertoken.New(rv.TokenAuthenticator)
			}
			return tokenreview.NewREST(a, rv.APIAudiences)
		}},
	{GVK: authzv1.WithKind("LocalSubjectAccessReview"), Resource: "localsubjectaccessreviews", Namespaced: true, verbs: createOnly,
		review: func(rv Reviewers) rest.Creater { return localsubjectaccessreview.NewREST(rv.Authorizer, Scheme) }},
	{GVK: authzv1.WithKind("SelfSubjectAccessReview"), Resource: "selfsubjectaccessreviews", verbs: createOnly,
		review: func(rv Reviewers) rest.Creater { return selfsubjectaccessreview.NewREST(rv.Authorizer, Scheme) }},
	{GVK: authzv1.WithKind("SelfSubjectRulesReview"), Resource: "selfsubjectrulesreviews", verbs: createOnly,
		review: func(rv Reviewers) rest.Creater { return selfsubjectrulesreview.NewREST(rv.RuleResolver) }},
	{GVK: authzv1.WithKind("SubjectAccessReview"), Resource: "subjectaccessreviews", verbs: createOnly,
		review: func(rv Reviewers) rest.Creater { return subjectaccessreview.NewREST(rv.Authorizer, Scheme) }},
}

// reviewREST builds the upstream REST of a review kind.
type reviewREST func(Reviewers) rest.Creater

// Reviewers are what the reviews consult: the server's authorizer (the
// access reviews), rule resolver (SelfSubjectRulesReview), token
// authenticator and API audiences (TokenReview).
type Reviewers struct {
	// Authorizer nil allows everything, as kube-apiserver's
	// --authorization-mode=AlwaysAllow does.
	Authorizer authorizer.Authorizer
	// RuleResolver nil lists the Authorizer's rules when it resolves rules
	// too, every rule when Authorizer is nil, and else none, incomplete.
	RuleResolver authorizer.RuleResolver
	// TokenAuthenticator nil answers every TokenReview unauthenticated,
	// without an error, as upstream's REST without an authenticator does.
	TokenAuthenticator authenticator.Token
	APIAudiences       authenticator.Audiences
}

// withDefaults fills Authorizer and RuleResolver (see Reviewers).
func (rv Reviewers) withDefaults() Reviewers {
	if rv.RuleResolver == nil {
		switch r, ok := rv.Authorizer.(authorizer.RuleResolver); {
		case ok:
			rv.RuleResolver = r
		case rv.Authorizer == nil:
			rv.RuleResolver = authorizerfactory.NewAlwaysAllowAuthorizer()
		default:
			rv.RuleResolver = unknownRules{}
		}
	}
	if rv.Authorizer == nil {
		rv.Authorizer = authorizerfactory.NewAlwaysAllowAuthorizer()
	}
	return rv
}

// unknownRules resolves no rule and says so: the answer of an authorizer
// that cannot list rules (kube-apiserver's webhook mode).
type unknownRules struct{}

func (unknownRules) RulesFor(context.Context, user.Info, string) ([]authorizer.ResourceRuleInfo, []authorizer.NonResourceRuleInfo, bool, error) {
	return nil, nil, true, nil
}

// IsReview says whether the kind is a review: created and answered, never
// stored.
func (k *Kind) IsReview() bool { return k.review != nil }

// Review answers the creation of a review as kube-apiserver's create
// handler and the kind's REST do. obj comes from Decode (managedFields
// recorded); ctx from Context, with the requesting user
// (genericapirequest.WithUser). The object's system fields are wiped and
// its namespace set to the request's (a different one is 400), then the
// upstream REST validates it and fills its status.
func (k *Kind) Review(ctx context.Context, obj runtime.Object, rv Reviewers, options *metav1.CreateOptions) (*unstructured.Unstructured, error) {
	if k.review == nil {
		return nil, apierrors.NewInternalError(fmt.Errorf("registry: %s is not a review", k.GVK))
	}
	if m, err := meta.Accessor(obj); err == nil {
		rest.WipeObjectMetaSystemFields(m)
		if err := rest.EnsureObjectNamespaceMatchesRequestNamespace(genericapirequest.NamespaceValue(ctx), m); err != nil {
			return nil, err
		}
	}
	internal, err := k.toInternal(obj)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	out, err := k.review(rv.withDefaults()).Create(ctx, internal, nil, options)
	if err != nil {
		return nil, err
	}
	return k.stored(out)
}
