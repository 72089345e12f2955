package server

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"runtime"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/apiserver/pkg/util/webhook"
	"k8s.io/klog/v2"

	"github.com/stratadev/strata/admission"
	"github.com/stratadev/strata/apiserver"
	"github.com/stratadev/strata/apiserver/authn"
	"github.com/stratadev/strata/apiserver/filters"
	"github.com/stratadev/strata/apiserver/filters/audit"
	"github.com/stratadev/strata/bootstrap"
	"github.com/stratadev/strata/registry"
	"github.com/stratadev/strata/storage"
	"github.com/stratadev/strata/storage/etcd"
)

// KubernetesVersion is the Kubernetes release whose API strata serves.
const KubernetesVersion = "v1.37.2"

// openAPIWarmWait is how long the OpenAPI documents' warm waits for a
// client to see the server ready before it starts anyway.
const openAPIWarmWait = time.Second

// Running is a started server.
type Running struct {
	// URL is where the API is served; Kubeconfig the file that reaches it.
	URL, Kubeconfig string
	done            chan error
	// handler is the filter chain the listener serves (benchmarks call it
	// in-process).
	handler http.Handler
}

// Wait blocks until the server has stopped and returns why.
func (r *Running) Wait() error { return <-r.done }

// Start starts etcd (unless external), the API and its listener, and
// returns once requests are served. The server stops, gracefully, when
// ctx ends; Wait reports the end.
func Start(ctx context.Context, o *Options) (*Running, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	log := o.Logger
	if log == nil {
		log = slog.Default()
	}
	// The upstream code strata runs (service allocation, the bootstrap
	// controller) logs through klog: into the server's log.
	klog.SetSlogLogger(log)
	if err := os.MkdirAll(o.DataDir, 0o700); err != nil {
		return nil, fmt.Errorf("data directory %s: %w", o.DataDir, err)
	}
	clock := newStartClock(log)
	clock.step("before start")
	// What needs no etcd starts first, beside etcd's own start (mostly
	// disk): the OpenAPI documents and server-side apply's type models,
	// which take much of a start's CPU between them; startEtcd makes the
	// credentials likewise.
	s := &starting{o: o, log: log, clock: clock, early: earlyWork{
		openAPI:           apiserver.BuildOpenAPI(registry.Builtin(), versionInfo().GitVersion),
		credentialsBefore: credentialFiles(o)}}
	go func() { _ = registry.WarmFieldManagers() }() // apiserver.New reports an error
	seq := &sequence{done: clock.step}
	if err := seq.start(ctx, step{name: "etcd", start: s.runEtcd, stop: s.stopEtcd}); err != nil {
		return nil, err
	}
	// The waits of the start after etcd's give up after a minute.
	readyCtx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	if err := seq.start(readyCtx, s.steps()...); err != nil {
		return nil, err
	}
	go s.warmOpenAPI()
	log.Info("strata server is serving", "url", s.running.URL, "kubeconfig", s.running.Kubeconfig, "dataDir", o.DataDir)
	go s.shutdown(ctx, seq)
	return s.running, nil
}

func startEtcd(ctx context.Context, o *Options, log *slog.Logger) (*etcd.Server, *clientv3.Client, error) {
	// The embedded member logs only fatal errors: at its level "error" it
	// reports its own listeners closing at every shutdown; its real
	// failures reach the user through the API's errors and /readyz.
	cfg, err := etcd.Options{DataDir: o.etcdDir(), Servers: o.EtcdServers, LogLevel: "fatal",
		CAFile: o.EtcdCAFile, CertFile: o.EtcdCertFile, KeyFile: o.EtcdKeyFile,
		QuotaBackendBytes: o.QuotaBackendBytes, UnsafeNoFsync: o.EtcdUnsafeNoFsync, Logger: log}.Complete()
	if err != nil {
		return nil, nil, err
	}
	srv := etcd.NewServer(cfg)
	if err := srv.Lock(); err != nil {
		return nil, nil, err
	}
	// The data directory is this process's (an embedded member's lock is
	// held; external etcd leaves it unlocked, as before): the credentials
	// a first start makes are made beside etcd's start, and done before
	// this returns, whatever happened.
	credentialsMade := makeCredentials(o)
	err = srv.Run(ctx)
	credentialsMade()
	if err != nil {
		return nil, nil, err
	}
	client, err := srv.Client()
	if err != nil {
		return nil, nil, fmt.Errorf("etcd client: %w", err)
	}
	return srv, client, nil
}

// earlyWork is what Start began before etcd started.
type earlyWork struct {
	openAPI *apiserver.OpenAPIBuild
	// credentialsBefore is credentialFiles before makeCredentials.
	credentialsBefore map[string]bool
}

// starting is what the start's steps share: each step's start sets what
// later steps use and what its own stop stops.
type starting struct {
	o     *Options
	log   *slog.Logger
	clock *startClock
	early earlyWork

	local     etcd.Local
	closeEtcd func()

	auditor       *audit.Auditor
	sa            *serviceAccounts
	tokenREST     rest.NamedCreater
	authenticator *authn.Authenticator
	authenticate  func(http.Handler) http.Handler
	tlsConfig     *tls.Config
	token         string
	caPEM         []byte

	az    *authorization
	adm   *lateAdmission
	space *storage.SpaceGuard
	api   *apiserver.Server
	sh    *shared

	handler  http.Handler
	httpSrv  *http.Server
	ln       net.Listener
	serveErr chan error
	running  *Running

	// warm closes once the OpenAPI v3 documents are built and encoded,
	// after serving: the MutatingAdmissionPolicy plugin's first
	// /openapi/v3 poll waits for it (admission/openapiwait.go).
	warm                      chan struct{}
	chain                     *admission.Chain
	webhooks                  webhook.ServiceResolver
	servingSynced, policySeen func(context.Context) error

	kubernetesService *bootstrap.Controller
	// stopAuthenticationInfo stops the publishers of kube-system's
	// authentication ConfigMaps.
	stopAuthenticationInfo func()
	stopControllers        func()
	stopCompaction         context.CancelFunc
}

// steps is the start after etcd's. The stops run in the reverse order,
// at shutdown as after a failed start; the order is what a graceful
// shutdown needs:
//   - serving is the last step, so its stop comes first: it ends the
//     watches, cleanly (the clients see the stream end). A watch never
//     finishes by itself, and the listener's graceful stop would wait for
//     it until the shutdown timeout;
//   - the kubernetes Service's stop takes this server out of its
//     endpoints through the API while the listener still serves, so that
//     clients move on before it closes. That is why the HTTP server's
//     graceful stop belongs to the listener, bound before the Service
//     starts, and not to serving;
//   - the listener's stop closes it and waits for the requests in flight;
//     only then do the shared informers (the authorizer, authenticator and
//     admission plugins read them), the stores and the audit log stop;
//   - the controllers and the compactor serve no request: they stop
//     early, and etcd (the first step, in Start) last.
func (s *starting) steps() []step {
	return []step{
		{name: "audit", start: s.newAuditor, stop: func(context.Context) error { s.auditor.Close(); return nil }},
		{name: "credentials", start: s.credentials},
		{name: "api", start: s.newAPI, stop: func(context.Context) error { s.api.Close(); return nil }},
		{name: "stores ready", start: func(ctx context.Context) error { return s.api.WaitReady(ctx) }},
		{name: "namespaces", start: func(ctx context.Context) error { return s.api.EnsureNamespaces(ctx) }},
		{name: "shared informers", start: s.newShared, stop: func(context.Context) error { s.sh.close(); return nil }},
		{name: "authorizer", start: s.prepareAuthorizer},
		{name: "listener", start: s.listen, stop: s.shutdownHTTP},
		{name: "admission", start: s.newAdmission},
		{name: "kubernetes service", start: s.startKubernetesService,
			stop: func(context.Context) error { s.kubernetesService.Stop(); return nil }},
		{name: "authentication info", start: s.startAuthenticationInfo,
			stop: func(context.Context) error { s.stopAuthenticationInfo(); return nil }},
		{name: "authorization", start: s.authorize},
		{name: "openapi", start: func(ctx context.Context) error { return s.api.WaitOpenAPI(ctx) }},
		{name: "controllers", start: s.startControllers, stop: func(context.Context) error { s.stopControllers(); return nil }},
		{name: "compaction", start: s.startCompaction, stop: func(context.Context) error { s.stopCompaction(); return nil }},
		{name: "serving", start: s.serve, stop: func(context.Context) error { s.api.EndWatches(); return nil }},
	}
}

// runEtcd starts the embedded member, or connects to external etcd. etcd
// lives until its stop, not until the start's context ends.
func (s *starting) runEtcd(context.Context) error {
	ctx, stop := context.WithCancel(context.Background())
	srv, client, err := startEtcd(ctx, s.o, s.log)
	if err != nil {
		stop()
		return err
	}
	s.local = srv.Local(client)
	s.closeEtcd = func() {
		s.local.Close()
		client.Close()
		stop()
		<-srv.Done()
	}
	return nil
}

func (s *starting) stopEtcd(context.Context) error {
	s.closeEtcd()
	return nil
}

func (s *starting) newAuditor(context.Context) error {
	auditor, err := audit.New(s.o.Audit)
	if err != nil {
		return err
	}
	s.auditor = auditor
	return nil
}

// credentials loads (or, on a first start, finds made by makeCredentials)
// the service-account issuer, the serving certificate and the tokens.
func (s *starting) credentials(context.Context) error {
	sa, err := newServiceAccounts(s.o)
	if err != nil {
		return err
	}
	tokenREST, err := sa.issuer.TokenREST(sa.client, nil)
	if err != nil {
		return err
	}
	authenticator, authenticate, tlsConfig, token, caPEM, err := secure(s.o, s.auditor, anonymous(s.o, s.log))
	if err != nil {
		return err
	}
	logNewCredentials(s.log, s.early.credentialsBefore, credentialFiles(s.o))
	authenticator.APIAudiences = sa.issuer.APIAudiences()
	s.sa, s.tokenREST, s.authenticator, s.authenticate = sa, tokenREST, authenticator, authenticate
	s.tlsConfig, s.token, s.caPEM = tlsConfig, token, caPEM
	return nil
}

// newAPI serves the API on local: the stores, the allocators, the
// bootstrap and the compactor use local.Client (for the embedded member,
// their reads and writes in-process); the space guard, which asks each
// member endpoint for its status and defragments it, dials.
func (s *starting) newAPI(context.Context) error {
	o := s.o
	compat, _ := o.patchCompat()
	serviceIPs, nodePorts, _ := o.serviceRanges()
	s.az, s.adm = newAuthorization(), &lateAdmission{}
	s.space = storage.NewSpaceGuard(s.local.Dialed(), s.log)
	api, err := apiserver.New(apiserver.Config{Client: s.local.Client, NewWatcher: s.local.NewWatcher, OpenAPI: s.early.openAPI, PatchCompat: compat, Version: versionInfo(), Logger: s.log,
		Metrics: filters.Default(), ServiceClusterIPRange: serviceIPs, ServiceNodePortRange: nodePorts,
		WebhookAuthWrapper: serviceDial(o.webhookDial),
		Authorizer:         &s.az.late, RuleResolver: &s.az.late, Admission: s.adm, WithoutNamespaceLifecycle: !o.Admission.NamespaceLifecycle(), TokenAuthenticator: s.authenticator,
		TokenRequest: s.tokenREST, APIAudiences: s.sa.issuer.APIAudiences(), ExtraHandlers: extraHandlers(o, s.sa),
		Storage: func(c *storage.Config) { o.tuneStorage(c); c.OnNoSpace = s.space.Wake }, ReadyChecks: append(s.az.readyChecks(), apiserver.HealthCheck{Name: "etcd-space", Check: s.space.Check})})
	if err != nil {
		return err
	}
	s.api = api
	return nil
}

func (s *starting) newShared(context.Context) error {
	sh, err := newShared(s.api)
	if err != nil {
		return err
	}
	s.sh = sh
	return nil
}

// prepareAuthorizer makes the authenticator check service-account tokens
// on the shared informers, and the authorizer decide on them; nothing is
// served before this.
func (s *starting) prepareAuthorizer(ctx context.Context) error {
	s.sa.bind(s.sh)
	s.authenticator.More = s.sa.authenticator(s.o, s.sh)
	return s.az.prepare(ctx, s.o, s.sh)
}

// newAdmission builds the admission chain and the webhooks' service
// resolver, and starts the informers serving needs. Those informers (the
// authorizer's, the authenticator's, the admission plugins', the
// webhooks' service resolver's) are requested and started before the
// controllers request theirs, so that readiness waits for these only
// (shared.startServing).
func (s *starting) newAdmission(context.Context) error {
	s.warm = make(chan struct{})
	chain, err := newAdmission(s.o, s.sh, s.az, s.ln.Addr(), s.warm)
	if err != nil {
		return err
	}
	webhooks, err := apiserver.NewEndpointServiceResolver(s.sh.informers, &url.URL{Scheme: "https", Host: dialAddress(s.ln.Addr())})
	if err != nil {
		return err
	}
	s.chain, s.webhooks = chain, webhooks
	// Before startServing, which starts every informer asked for so far.
	s.policySeen = policySeen(s.o, s.sh.informers)
	s.servingSynced = s.sh.startServing()
	return nil
}

// startKubernetesService runs before serving, so that a ready server has
// repaired its allocations and a shutdown never meets them half started.
func (s *starting) startKubernetesService(ctx context.Context) error {
	ks, err := startKubernetesService(ctx, s.o, s.sh, s.local.Client, s.ln.Addr().(*net.TCPAddr).Port, s.log)
	if err != nil {
		return err
	}
	s.kubernetesService = ks
	return nil
}

// authorize puts the admission chain and the webhooks' resolver in
// place, after the server's own first writes (lateAdmission), and waits
// until requests are decided on the bootstrap policy.
func (s *starting) authorize(ctx context.Context) error {
	s.adm.c.Store(s.chain)
	s.api.SetServiceResolver(s.webhooks)
	return s.az.wait(ctx, s.servingSynced, s.policySeen, s.clock)
}

// startControllers starts the kube-controller-manager controllers once
// the API is ready, as they would in a process of their own: their first
// lists (with many objects, seconds of CPU: the ConfigMaps, the garbage
// collector's metadata of everything) are not the API's start-up. Before
// serving (they reach the API in-process), so that a shutdown never meets
// them half started.
func (s *starting) startControllers(context.Context) error {
	s.stopControllers = startControllers(s.o, s.sh, s.caPEM, s.log)
	s.sh.start()
	return nil
}

func (s *starting) startCompaction(context.Context) error {
	ctx, stop := context.WithCancel(context.Background())
	s.stopCompaction = stop
	if s.o.CompactionInterval >= 0 {
		go storage.NewCompactor(s.local.Client, s.o.CompactionInterval, s.log).Run(ctx)
	}
	go s.space.Run(ctx, 0) // recovers from etcd's NOSPACE alarm
	return nil
}

// dialAddress is the address clients dial for a listener: a wildcard bind
// is reached through loopback.
func dialAddress(addr net.Addr) string {
	host, port, _ := net.SplitHostPort(addr.String())
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port)
}

func versionInfo() version.Info {
	parts := strings.SplitN(strings.TrimPrefix(KubernetesVersion, "v"), ".", 3)
	return version.Info{Major: parts[0], Minor: parts[1], GitVersion: KubernetesVersion + "+strata",
		GoVersion: runtime.Version(), Compiler: runtime.Compiler, Platform: runtime.GOOS + "/" + runtime.GOARCH}
}
