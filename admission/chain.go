package admission

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"time"

	"go.opentelemetry.io/otel/trace/noop"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/admission/initializer"
	apiserverapi "k8s.io/apiserver/pkg/apis/apiserver"
	apiserverv1 "k8s.io/apiserver/pkg/apis/apiserver/v1"
	apiserverv1alpha1 "k8s.io/apiserver/pkg/apis/apiserver/v1alpha1"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	utilcompatibility "k8s.io/apiserver/pkg/util/compatibility"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/apiserver/pkg/util/proxy"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	aggregator "k8s.io/kube-aggregator/pkg/apiserver"
	controlplaneadmission "k8s.io/kubernetes/pkg/controlplane/apiserver/admission"
	kubeadmission "k8s.io/kubernetes/pkg/kubeapiserver/admission"

	"github.com/stratadev/strata/registry"
)

// Deps is what the plugins are initialized with, as kube-apiserver
// initializes them: the server's loopback client and shared informers
// (started after New, so that the plugins' informers are among them).
type Deps struct {
	Loopback   *rest.Config
	Client     kubernetes.Interface
	Informers  informers.SharedInformerFactory
	Authorizer authorizer.Authorizer
	// ServerID is the server's identity (the plugins' APIServerID).
	ServerID string
	// Self is the server's URL: kubernetes.default.svc resolves to it.
	Self *url.URL
	Stop <-chan struct{}
	// OpenAPIWarm, closed once the server's OpenAPI v3 documents are built
	// and encoded, holds back the plugins' /openapi/v3 requests until then
	// (openapiwait.go; nil: they are not held back).
	OpenAPIWarm <-chan struct{}
	// Dial, if set, dials the webhooks service references name (tests
	// reach loopback through it); it is kube-apiserver's proxy transport.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
}

// configScheme reads --admission-control-config-file, as kube-apiserver's.
var configScheme = runtime.NewScheme()

func init() {
	utilruntime.Must(apiserverapi.AddToScheme(configScheme))
	utilruntime.Must(apiserverv1alpha1.AddToScheme(configScheme))
	utilruntime.Must(apiserverv1.AddToScheme(configScheme))
}

// Chain is the admission chain; it implements registry.Admission.
type Chain struct {
	chain   admission.Interface
	builtin admission.ObjectInterfaces
}

var _ registry.Admission = (*Chain)(nil)

// New builds the enabled plugins (NamespaceLifecycle excepted: see
// Options.NamespaceLifecycle) with kube-apiserver's initializers: the
// generic one, the webhooks' (service references resolved through the
// Service's EndpointSlices, as kube-apiserver's --enable-aggregator-routing
// does, since strata runs no service proxy) and kube's (quota evaluators,
// manifest loaders).
func New(o Options, d Deps, kinds []*registry.Kind) (*Chain, error) {
	var names []string
	for _, name := range o.Enabled() {
		if name != "NamespaceLifecycle" {
			names = append(names, name)
		}
	}
	config, err := admission.ReadAdmissionConfiguration(names, o.ConfigFile, configScheme)
	if err != nil {
		return nil, fmt.Errorf("--admission-control-config-file: %w", err)
	}
	dyn, err := dynamic.NewForConfig(d.Loopback)
	if err != nil {
		return nil, fmt.Errorf("admission: dynamic client: %w", err)
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(d.Client.Discovery()))
	// The mapper forgets what it discovered every 30 s (new CRDs), as
	// kube-apiserver's start-apiserver-admission-initializer hook does.
	go wait.Until(mapper.Reset, 30*time.Second, d.Stop)
	slices, err := proxy.NewEndpointSliceListerGetter(d.Informers.Discovery().V1().EndpointSlices().Lister())
	if err != nil {
		return nil, fmt.Errorf("admission: %w", err)
	}
	resolver := aggregator.NewLoopbackServiceResolver(aggregator.NewEndpointServiceResolver(
		d.Informers.Core().V1().Services().Lister(), slices), d.Self)
	cp := &controlplaneadmission.Config{LoopbackClientConfig: d.Loopback, ExternalInformers: d.Informers}
	var transport *http.Transport
	if d.Dial != nil {
		transport = &http.Transport{DialContext: d.Dial}
	}
	kube, err := cp.New(transport, nil, resolver, noop.NewTracerProvider())
	if err != nil {
		return nil, fmt.Errorf("admission: %w", err)
	}
	inits := admission.PluginInitializers{
		initializer.NewAPIServerIDInitializer(d.ServerID),
		initializer.New(openAPIAfter(d.Client, d.OpenAPIWarm, d.Stop), dyn, d.Informers, d.Authorizer, utilfeature.DefaultFeatureGate,
			utilcompatibility.DefaultBuildEffectiveVersion(), d.Stop, mapper),
	}
	inits = append(inits, kube...)
	inits = append(inits, kubeadmission.NewPluginInitializer())
	chain, err := upstream().GenericAdmission.Plugins.NewFromPlugins(names, config, inits, nil)
	if err != nil {
		return nil, fmt.Errorf("admission: %w", err)
	}
	return &Chain{chain: admission.WithAudit(chain), builtin: builtinObjects(kinds)}, nil
}

// Admit runs the mutating plugins.
func (c *Chain) Admit(ctx context.Context, op admission.Operation, req *registry.AdmissionRequest, obj, old runtime.Object) error {
	m, ok := c.chain.(admission.MutationInterface)
	if !ok || !m.Handles(op) {
		return nil
	}
	return m.Admit(ctx, c.attributes(op, req, obj, old), c.objects(req, obj, old))
}

// Validate runs the validating plugins.
func (c *Chain) Validate(ctx context.Context, op admission.Operation, req *registry.AdmissionRequest, obj, old runtime.Object) error {
	v, ok := c.chain.(admission.ValidationInterface)
	if !ok || !v.Handles(op) {
		return nil
	}
	return v.Validate(ctx, c.attributes(op, req, obj, old), c.objects(req, obj, old))
}

func (c *Chain) attributes(op admission.Operation, req *registry.AdmissionRequest, obj, old runtime.Object) admission.Attributes {
	name := req.Name
	if name == "" && obj != nil {
		if m, err := meta.Accessor(obj); err == nil {
			name = m.GetName()
		}
	}
	return admission.NewAttributesRecord(obj, old, req.Kind, req.Namespace, name, req.Resource, req.Subresource,
		op, req.Options, req.DryRun, req.User)
}

// objects are the scheme the plugins convert with: the built-in kinds'
// for built-in kinds, unstructured objects (the versions of the request's
// CRD) for custom resources.
func (c *Chain) objects(req *registry.AdmissionRequest, obj, old runtime.Object) admission.ObjectInterfaces {
	if obj == nil {
		obj = old
	}
	if _, ok := obj.(*unstructured.Unstructured); ok {
		return customObjects(req.Resource.Resource, req.Versions)
	}
	return c.builtin
}
