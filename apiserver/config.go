package apiserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/apiserver/pkg/util/webhook"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"

	"github.com/stratadev/strata/apiserver/openapi"
	"github.com/stratadev/strata/registry"
	"github.com/stratadev/strata/storage"
	"github.com/stratadev/strata/strategicpatch"
)

// DefaultMaxRequestBodyBytes is kube-apiserver's limit on a request body.
const DefaultMaxRequestBodyBytes = 3 * 1024 * 1024

// DefaultMinWatchTimeout is kube-apiserver's --min-request-timeout: a watch
// without timeoutSeconds ends after a random time between it and twice it.
const DefaultMinWatchTimeout = 30 * time.Minute

// Config describes a Server.
type Config struct {
	// Client reaches etcd. The server does not close it.
	Client *clientv3.Client
	// NewWatcher makes the watchers of the stores' caches; default
	// clientv3.NewWatcher(Client) (storage.Config.NewWatcher).
	NewWatcher func() clientv3.Watcher
	// Kinds are the served kinds; default registry.Builtin().
	Kinds []*registry.Kind
	// OpenAPI is the OpenAPI documents of Kinds, started ahead
	// (BuildOpenAPI); nil: New starts it.
	OpenAPI *OpenAPIBuild
	// PatchCompat selects the strategic-merge-patch behaviour: strata's
	// default or apimachinery's exact one.
	PatchCompat strategicpatch.Compat
	// MaxRequestBodyBytes bounds request bodies (413 beyond it); default
	// DefaultMaxRequestBodyBytes.
	MaxRequestBodyBytes int64
	// MinWatchTimeout: see DefaultMinWatchTimeout.
	MinWatchTimeout time.Duration
	// Version is what /version answers.
	Version version.Info
	// Storage adjusts each kind's storage configuration (tests shorten
	// waits and intervals); may be nil.
	Storage func(*storage.Config)
	// Logger receives the server's logs; default discards them.
	Logger *slog.Logger
	// Metrics, when set, receives the measurements behind kube-apiserver's
	// watch, storage and etcd metrics.
	Metrics Metrics
	// ServiceClusterIPRange and ServiceNodePortRange are what Services'
	// cluster IPs and node ports are allocated from; default
	// kube-apiserver's (package servicealloc).
	ServiceClusterIPRange *net.IPNet
	ServiceNodePortRange  utilnet.PortRange
	// Authorizer decides what the API's own checks ask beyond the filter
	// chain's (RBAC escalation, the access reviews); RuleResolver lists a
	// user's rules (SelfSubjectRulesReview). nil allows everything.
	Authorizer   authorizer.Authorizer
	RuleResolver authorizer.RuleResolver
	// Admission is the admission chain writes pass (package admission);
	// nil admits everything.
	Admission registry.Admission
	// WithoutNamespaceLifecycle turns off the NamespaceLifecycle admission
	// strata runs itself (--disable-admission-plugins=NamespaceLifecycle):
	// objects may then be created in namespaces that do not exist or are
	// terminating, and the default namespaces deleted.
	WithoutNamespaceLifecycle bool
	// TokenAuthenticator checks the tokens of TokenReviews, as the filter
	// chain's authentication checks bearer tokens; APIAudiences are the
	// audiences the server's tokens are for (--api-audiences).
	TokenAuthenticator authenticator.Token
	APIAudiences       authenticator.Audiences
	// TokenRequest creates the TokenRequests of serviceaccounts/token
	// (upstream's TokenREST, package satoken); nil answers them 404.
	TokenRequest rest.NamedCreater
	// ExtraHandlers serve paths outside the API (the OIDC discovery
	// documents), behind the same filters.
	ExtraHandlers map[string]http.Handler
	// ReadyChecks are more /readyz checks (each also at /readyz/<name>),
	// such as the etcd space alarm's.
	ReadyChecks []HealthCheck
	// WebhookAuthWrapper wraps the resolver of the credentials and client
	// settings of CRD conversion webhook calls, as kube-apiserver's
	// AuthenticationInfoResolverWrapper; nil: none (no credentials, 30 s).
	WebhookAuthWrapper webhook.AuthenticationInfoResolverWrapper
}

// HealthCheck is a named check for /readyz: it fails with a reason that
// is logged (the public response only names the check).
type HealthCheck struct {
	Name  string
	Check func(context.Context) error
	// Quiet checks are not logged when they fail: a post-start hook that
	// has not finished is the normal state of a starting server, which
	// its own controllers poll.
	Quiet bool
}

// Metrics records what the API measures (apiserver/filters.Metrics
// implements it).
type Metrics interface {
	// WatchEventSent counts an event sent to a watcher, of size bytes.
	WatchEventSent(gvr schema.GroupVersionResource, size int)
	// SetStorageObjects reports how many objects of gr are stored (-1
	// when counting failed).
	SetStorageObjects(gr schema.GroupResource, n int64)
	// ObserveEtcd records one etcd request made for gr.
	ObserveEtcd(operation string, gr schema.GroupResource, d time.Duration, err error)
	// SetWatchCacheBytes reports the size of gr's watch cache history.
	SetWatchCacheBytes(gr schema.GroupResource, n int64)
}

// resource is one served kind and its generic store (nil for a review).
type resource struct {
	kind  *registry.Kind
	store *registry.Store
	// items keeps the JSON of list items, events that of watch events
	// (shared by the resources of one store); protos the protobuf
	// messages of objects and protoEvents the protobuf watch frames (nil
	// for kinds without protobuf).
	items, events, protos, protoEvents *itemCache
}

// Server is the API. Build it with New; Close stops its stores.
type Server struct {
	cfg Config
	// served is the current set of resources (see served.go); mu
	// serialises its replacement.
	served         atomic.Pointer[served]
	mu             sync.Mutex
	crds           *crdController
	namespaceRules *registry.Namespaces
	// shared is what the resources' stores share.
	shared  *registry.Shared
	openapi *OpenAPIBuild
	ctx     context.Context
	cancel  context.CancelFunc
	// watches ends when EndWatches is called.
	watches       context.Context
	endWatches    context.CancelFunc
	seenReady     chan struct{} // see SeenReady
	seenReadyOnce sync.Once
	countOnce     sync.Once // starts countObjects
	log           *slog.Logger
	// converters convert custom resources between versions; services
	// resolves their webhooks' service references (serviceresolver.go).
	converters *registry.CRConverters
	services   lateServiceResolver
}

// New starts a store (and its watch cache) for every kind.
func New(cfg Config) (*Server, error) {
	if cfg.Client == nil {
		return nil, errors.New("apiserver: config: an etcd client is required")
	}
	cfg.setDefaults()
	if err := allocateServices(cfg); err != nil {
		return nil, fmt.Errorf("apiserver: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Server{cfg: cfg, ctx: ctx, cancel: cancel, log: cfg.Logger, seenReady: make(chan struct{})}
	s.watches, s.endWatches = context.WithCancel(context.Background())
	var err error
	if s.converters, err = registry.NewCRConverters(&s.services, cfg.WebhookAuthWrapper); err != nil {
		cancel()
		return nil, fmt.Errorf("apiserver: %w", err)
	}
	if err := s.serveBuiltins(); err != nil {
		s.Close()
		return nil, err
	}
	registry.SetAuthorization(cfg.Kinds, s.cfg.Authorizer, s.lookupStore)
	if s.openapi = cfg.OpenAPI; s.openapi == nil {
		s.openapi = BuildOpenAPI(cfg.Kinds, cfg.Version.GitVersion)
	}
	// Server-side apply's type models take a few hundred milliseconds to
	// build: build them now, beside start-up, not in the first write.
	go func() {
		if err := registry.WarmFieldManagers(); err != nil {
			s.log.Error("server-side apply's type models", "err", err)
		}
	}()
	if crds, ok := s.current().lookup(registry.CRDResource); ok {
		s.crds = newCRDController(s, crds)
		go s.crds.run(ctx)
	}
	return s, nil
}

// setDefaults fills in what the Config leaves unset.
func (cfg *Config) setDefaults() {
	if cfg.Kinds == nil {
		cfg.Kinds = registry.Builtin()
	}
	if cfg.MaxRequestBodyBytes <= 0 {
		cfg.MaxRequestBodyBytes = DefaultMaxRequestBodyBytes
	}
	if cfg.MinWatchTimeout <= 0 {
		cfg.MinWatchTimeout = DefaultMinWatchTimeout
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
}

// serveBuiltins starts a store for every kind of the Config and serves
// them, with what their stores share.
func (s *Server) serveBuiltins() error {
	builtins := newServed()
	s.served.Store(builtins)
	s.namespaceRules = registry.NewNamespaces(s.ctx, !s.cfg.WithoutNamespaceLifecycle, s.stores, s.log)
	s.shared = &registry.Shared{Namespaces: s.namespaceRules, Lookup: s.lookupStore, TokenRequest: s.cfg.TokenRequest,
		EtcdHealth: s.etcdHealth, Log: s.log}
	for _, k := range s.cfg.Kinds {
		r, err := s.newResource(k)
		if err != nil {
			return err
		}
		builtins.add(r)
	}
	if !s.namespaceRules.Served() {
		return errors.New("apiserver: config: the namespaces kind is required")
	}
	return nil
}

// countObjects reports the number of stored objects of every served
// resource, now and then every interval, as kube-apiserver does for
// apiserver_storage_objects.
func (s *Server) countObjects(ctx context.Context, interval time.Duration) {
	for {
		seen := map[schema.GroupResource]bool{}
		for _, r := range s.current().resources {
			gr := r.kind.GroupResource()
			if seen[gr] || r.store == nil {
				continue
			}
			seen[gr] = true
			n, err := r.store.Storage().Count(ctx, "")
			if err != nil {
				n = -1
			}
			s.cfg.Metrics.SetStorageObjects(gr, n)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(interval):
		}
	}
}

// KnownResource says whether the API serves a resource (and subresource,
// "" for none) now, built-in or custom.
func (s *Server) KnownResource(gvr schema.GroupVersionResource, subresource string) bool {
	r, ok := s.current().lookup(gvr)
	return ok && (subresource == "" || r.kind.HasSubresource(subresource))
}

// EndWatches ends every watch being served, cleanly (the stream ends; the
// client watches again), and every watch started afterwards at once: the
// first step of a graceful shutdown, which then waits for the other
// requests in flight.
func (s *Server) EndWatches() {
	s.endWatches()
}

// newResource starts the store of a kind; a review has none.
func (s *Server) newResource(k *registry.Kind) (*resource, error) {
	if k.IsReview() {
		return &resource{kind: k}, nil
	}
	sc := storage.Config{Client: s.cfg.Client, NewWatcher: s.cfg.NewWatcher, Resource: k.GroupResource(), Kind: k.GVK,
		Namespaced: k.Namespaced, Logger: s.log}
	if m := s.cfg.Metrics; m != nil {
		gr := k.GroupResource()
		sc.Observe = func(op string, d time.Duration, err error) { m.ObserveEtcd(op, gr, d, err) }
		sc.ObserveCacheBytes = func(n int64) { m.SetWatchCacheBytes(gr, n) }
	}
	if k.CRD() != nil {
		sc.StorageVersion, sc.OnRead = k.StorageVersion(), k.OnRead()
	}
	if toStored, fromStored, ok := k.WebhookConversion(); ok {
		sc.Convert = &storage.Conversion{ToStored: toStored, FromStored: fromStored}
	}
	if keys, toStored, fromStored, ok := k.StoredWith(); ok {
		sc.KeyResource = keys
		sc.Convert = &storage.Conversion{ToStored: toStored, FromStored: fromStored}
	}
	if s.cfg.Storage != nil {
		s.cfg.Storage(&sc)
	}
	st, err := storage.New(sc)
	if err != nil {
		return nil, fmt.Errorf("apiserver: store for %s: %w", k.GroupResource(), err)
	}
	res := &resource{kind: k, store: registry.NewStore(k, st, s.shared), items: newItemCache(itemCacheBytes, k.CRD() != nil),
		events: newItemCache(eventCacheBytes, true)}
	if k.HasProtobuf() {
		res.protos = newProtobufCache(itemCacheBytes, k)
		res.protoEvents = newItemCache(eventCacheBytes, true)
	}
	return res, nil
}

// itemCacheBytes and eventCacheBytes bound each resource's caches of
// encoded list items and watch events (two generations of this much JSON
// each). An event is needed only while its watchers take it.
const (
	itemCacheBytes  = 16 << 20
	eventCacheBytes = 4 << 20
)

// current is the set of resources served now.
func (s *Server) current() *served { return s.served.Load() }

// lookupStore finds the store of a resource served now.
func (s *Server) lookupStore(gvr schema.GroupVersionResource) (*registry.Store, bool) {
	r, ok := s.current().lookup(gvr)
	if !ok || r.store == nil {
		return nil, false
	}
	return r.store, true
}

// etcdHealth is etcd's health as componentstatuses report it: a read of
// one key succeeds.
func (s *Server) etcdHealth(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	_, err := s.cfg.Client.Get(ctx, "health")
	return err
}

// stores are the generic stores of the resources served now.
func (s *Server) stores() []*registry.Store {
	var out []*registry.Store
	for _, r := range s.current().resources {
		if r.store != nil {
			out = append(out, r.store)
		}
	}
	return out
}

// openAPIScheme names the served types in the OpenAPI documents.
var openAPIScheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(apiextensionsv1.AddToScheme(s))
	utilruntime.Must(apiregistrationv1.AddToScheme(s))
	return s
}()

// openAPIResources describes the served kinds for the OpenAPI documents.
func openAPIResources(kinds []*registry.Kind) []openapi.Resource {
	out := make([]openapi.Resource, 0, len(kinds))
	for _, k := range kinds {
		if !k.Allows("list") && !k.IsReview() {
			// bindings (docs/server.md, "Known differences").
			continue
		}
		out = append(out, openAPIResource(k))
	}
	return out
}

// openAPIResource describes one served kind for the OpenAPI documents.
func openAPIResource(k *registry.Kind) openapi.Resource {
	return openapi.Resource{GVK: k.GVK, Plural: k.Resource, Namespaced: k.Namespaced, Verbs: k.Verbs(),
		Subresources: k.Subresources()}
}

// WaitReady blocks until every store's watch cache holds its initial list
// and the CRDs stored at start are served (WaitOpenAPI waits for the
// OpenAPI documents).
func (s *Server) WaitReady(ctx context.Context) error {
	if s.crds != nil {
		if err := s.crds.waitSynced(ctx); err != nil {
			return err
		}
	}
	for _, r := range s.current().resources {
		if r.store == nil {
			continue
		}
		if err := r.store.Storage().WaitReady(ctx); err != nil {
			return err
		}
	}
	return nil
}

// Close stops background work and every store.
func (s *Server) Close() {
	s.cancel()
	if s.crds != nil {
		s.crds.wait()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range s.current().resources {
		if r.store != nil {
			r.store.Storage().Close()
		}
	}
}

// EnsureNamespaces creates the default namespaces that do not exist yet
// and resumes the deletion of namespaces an earlier run left Terminating
// (registry.Namespaces.Ensure).
func (s *Server) EnsureNamespaces(ctx context.Context) error {
	if err := s.namespaceRules.Ensure(ctx); err != nil {
		return err
	}
	if s.cfg.Metrics != nil {
		// Counted once the default namespaces exist, then every minute.
		s.countOnce.Do(func() { go s.countObjects(s.ctx, time.Minute) })
	}
	return nil
}
