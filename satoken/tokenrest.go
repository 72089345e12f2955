package satoken

import (
	"context"
	"fmt"
	"strings"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/authorization/authorizerfactory"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/apiserver/pkg/storage"
	"k8s.io/apiserver/pkg/storage/storagebackend"
	"k8s.io/apiserver/pkg/storage/storagebackend/factory"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	api "k8s.io/kubernetes/pkg/apis/core"
	// The core types' internal form and conversions, which TokenREST
	// reads objects as.
	_ "k8s.io/kubernetes/pkg/apis/core/install"
	sastorage "k8s.io/kubernetes/pkg/registry/core/serviceaccount/storage"
	token "k8s.io/kubernetes/pkg/serviceaccount"
)

// TokenREST returns upstream's TokenREST: the create of
// serviceaccounts/token, reading the account and a bound pod, secret or
// node through client (which must not authenticate with a service-account
// token), authorizing webhook-bound requests with authz (nil allows; they
// need the alpha APIServerWebhookAuthenticationToken feature anyway).
//
// Upstream builds it only beside a ServiceAccount store; strata gives that
// store a storage whose only working call is Get, answered by client.
func (i *Issuer) TokenREST(client kubernetes.Interface, authz authorizer.Authorizer) (rest.NamedCreater, error) {
	if authz == nil {
		authz = authorizerfactory.NewAlwaysAllowAuthorizer()
	}
	opts := generic.RESTOptions{
		StorageConfig:  &storagebackend.ConfigForResource{GroupResource: api.Resource("serviceaccounts")},
		Decorator:      serviceAccountStorage(client),
		ResourcePrefix: "serviceaccounts",
	}
	r, err := sastorage.NewREST(opts, i.generator, i.cfg.APIAudiences, authz, i.cfg.MaxExpiration,
		podGetter{client}, secretGetter{client}, nodeGetter{client},
		validatingWebhooks{client}, mutatingWebhooks{client},
		i.cfg.ExtendExpiration, token.ExpirationExtensionSeconds*time.Second)
	if err != nil {
		return nil, fmt.Errorf("satoken: TokenRequest REST: %w", err)
	}
	return r.Token, nil
}

// serviceAccountStorage is the decorator that hands the ServiceAccount
// store its storage.
func serviceAccountStorage(client kubernetes.Interface) generic.StorageDecorator {
	return func(_ *storagebackend.ConfigForResource, prefix string, _ func(runtime.Object) (string, error),
		_, _ func() runtime.Object, _ storage.AttrFunc, _ storage.IndexerFuncs, _ *cache.Indexers,
	) (storage.Interface, factory.DestroyFunc, error) {
		return &accountStorage{client: client, prefix: prefix + "/"}, func() {}, nil
	}
}

// accountStorage answers the Get of the ServiceAccount store TokenREST
// reads accounts through; its other methods are never called (they are
// the nil embedded interface's).
type accountStorage struct {
	storage.Interface
	client kubernetes.Interface
	prefix string
}

// Get reads the account named by key (prefix/namespace/name) into objPtr
// (an internal ServiceAccount). The client's 404 is already the Status
// the store would make of a missing key.
func (s *accountStorage) Get(ctx context.Context, key string, _ storage.GetOptions, objPtr runtime.Object) error {
	namespace, name, ok := strings.Cut(strings.TrimPrefix(key, s.prefix), "/")
	if !ok {
		return fmt.Errorf("satoken: ServiceAccount key %q is not %sNAMESPACE/NAME", key, s.prefix)
	}
	sa, err := s.client.CoreV1().ServiceAccounts(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	return legacyscheme.Scheme.Convert(sa, objPtr, nil)
}

// The rest.Getters of the objects a token may be bound to, in the
// request's namespace (TokenREST keeps it in the context), as internal
// objects.
type (
	podGetter    struct{ client kubernetes.Interface }
	secretGetter struct{ client kubernetes.Interface }
	nodeGetter   struct{ client kubernetes.Interface }
)

func (g podGetter) Get(ctx context.Context, name string, opts *metav1.GetOptions) (runtime.Object, error) {
	pod, err := g.client.CoreV1().Pods(namespaceOf(ctx)).Get(ctx, name, *opts)
	return internal(pod, &api.Pod{}, err)
}

func (g secretGetter) Get(ctx context.Context, name string, opts *metav1.GetOptions) (runtime.Object, error) {
	secret, err := g.client.CoreV1().Secrets(namespaceOf(ctx)).Get(ctx, name, *opts)
	return internal(secret, &api.Secret{}, err)
}

func (g nodeGetter) Get(ctx context.Context, name string, opts *metav1.GetOptions) (runtime.Object, error) {
	node, err := g.client.CoreV1().Nodes().Get(ctx, name, *opts)
	return internal(node, &api.Node{}, err)
}

// namespaceOf is the request's namespace, which TokenREST's lookups keep.
func namespaceOf(ctx context.Context) string { return genericapirequest.NamespaceValue(ctx) }

// internal converts a client's answer to the internal type out.
func internal(obj runtime.Object, out runtime.Object, err error) (runtime.Object, error) {
	if err != nil {
		return nil, err
	}
	if err := legacyscheme.Scheme.Convert(obj, out, nil); err != nil {
		return nil, fmt.Errorf("satoken: converting %T: %w", obj, err)
	}
	return out, nil
}

// The webhook configurations a token may be bound to (behind the alpha
// APIServerWebhookAuthenticationToken feature).
type (
	validatingWebhooks struct{ client kubernetes.Interface }
	mutatingWebhooks   struct{ client kubernetes.Interface }
)

func (g validatingWebhooks) Get(ctx context.Context, name string, opts metav1.GetOptions) (*admissionregistrationv1.ValidatingWebhookConfiguration, error) {
	return g.client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(ctx, name, opts)
}

func (g mutatingWebhooks) Get(ctx context.Context, name string, opts metav1.GetOptions) (*admissionregistrationv1.MutatingWebhookConfiguration, error) {
	return g.client.AdmissionregistrationV1().MutatingWebhookConfigurations().Get(ctx, name, opts)
}
