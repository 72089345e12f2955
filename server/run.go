package server

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/apiserver/pkg/util/webhook"
	"k8s.io/klog/v2"

	"github.com/stratadev/strata/admission"
	"github.com/stratadev/strata/apiserver"
	"github.com/stratadev/strata/apiserver/authn"
	"github.com/stratadev/strata/apiserver/filters"
	"github.com/stratadev/strata/apiserver/filters/audit"
	"github.com/stratadev/strata/apiserver/filters/authorize"
	"github.com/stratadev/strata/apiserver/filters/timeout"
	"github.com/stratadev/strata/bootstrap"
	"github.com/stratadev/strata/internal/pki"
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

// startAPI serves the API on local: the stores, the allocators, the

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

// listen builds the filter chain and the HTTP server and binds the port,
// which is served from the last step on.
func (s *starting) listen(context.Context) error {
	o := s.o
	s.handler = s.filterChain()
	s.httpSrv = &http.Server{Handler: s.handler, TLSConfig: s.tlsConfig, ReadHeaderTimeout: 30 * time.Second,
		ErrorLog: slog.NewLogLogger(s.log.Handler(), slog.LevelDebug)}
	if !o.PlainHTTP {
		if err := apiserver.ConfigureHTTP2(s.httpSrv); err != nil {
			return err
		}
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(o.BindAddress, strconv.Itoa(o.SecurePort)))
	if err != nil {
		return fmt.Errorf("listening on %s:%d: %w", o.BindAddress, o.SecurePort, err)
	}
	s.ln = ln
	s.sa.serveDiscovery(ln.Addr(), s.log)
	return nil
}

func (s *starting) filterChain() http.Handler {
	o := s.o
	handler := filters.Chain(s.api.Handler(), filters.Config{
		MaxRequestsInFlight:         o.MaxRequestsInFlight,
		MaxMutatingRequestsInFlight: o.MaxMutatingRequestsInFlight,
		Bound:                       func(h http.Handler) http.Handler { return timeout.Bound(h, o.RequestTimeout) },
		Authenticate:                s.authenticate,
		Audit:                       func(h http.Handler) http.Handler { return s.auditor.Audit(h, filters.IsLongRunning) },
		Impersonate:                 impersonate(o.PlainHTTP, &s.az.late),
		Authorize:                   authorize.New(&s.az.late),
		KnownResource:               s.api.KnownResource,
		Metrics:                     filters.Default(),
		Logger:                      s.log,
	})
	handler = s.auditor.Init(handler)
	if o.PlainHTTP {
		handler = plainHTTPGuard(handler)
	}
	return handler
}

// shutdownHTTP closes the listener and waits for the requests in flight
// (the watches have ended: see steps). After a failed start the server
// never served, and knows no listener to close.
func (s *starting) shutdownHTTP(ctx context.Context) error {
	err := s.httpSrv.Shutdown(ctx)
	s.ln.Close()
	return err
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

// serve writes the kubeconfig and serves the listener.
func (s *starting) serve(context.Context) error {
	scheme := "https"
	if s.o.PlainHTTP {
		scheme = "http"
	}
	r := &Running{URL: scheme + "://" + dialAddress(s.ln.Addr()), Kubeconfig: s.o.kubeconfigPath(), done: make(chan error, 1), handler: s.handler}
	if err := pki.WriteKubeconfig(r.Kubeconfig, r.URL, s.caPEM, s.token); err != nil {
		return err
	}
	s.running = r
	s.serveErr = make(chan error, 1)
	go func() {
		if s.o.PlainHTTP {
			s.serveErr <- s.httpSrv.Serve(s.ln)
		} else {
			s.serveErr <- s.httpSrv.ServeTLS(s.ln, "", "")
		}
	}()
	if s.o.PlainHTTP {
		s.log.Warn("serving plain HTTP without authentication: any local process can use the API", "url", r.URL)
	}
	return nil
}

// warmOpenAPI builds the OpenAPI documents once a client has seen the
// server ready (or after openAPIWarmWait), on one goroutine: their CPU
// would otherwise delay the first /readyz 200 on a small machine. A
// document asked for before is built on demand.
func (s *starting) warmOpenAPI() {
	select {
	case <-s.api.SeenReady():
	case <-time.After(openAPIWarmWait):
	}
	s.api.WarmOpenAPI(context.Background())
	close(s.warm)
}

// shutdown stops the server, every step in reverse order (see steps),
// once ctx ends or serving fails, and reports the end to Wait.
func (s *starting) shutdown(ctx context.Context, seq *sequence) {
	var err error
	select {
	case <-ctx.Done():
	case err = <-s.serveErr:
	}
	stopCtx, cancel := context.WithTimeout(context.Background(), s.o.ShutdownTimeout)
	defer cancel()
	s.log.Info("strata server is shutting down: ending watches and finishing requests in flight")
	if stopErr := seq.stop(stopCtx); err == nil {
		err = stopErr
	}
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	s.log.Info("strata server stopped")
	s.running.done <- err
}

// secure prepares authentication (the authenticator, and its filter: nil
// for plain HTTP), TLS, the admin token and the CA clients should trust.
func secure(o *Options, auditor *audit.Auditor, anonymous func(*http.Request) bool) (*authn.Authenticator, func(http.Handler) http.Handler, *tls.Config, string, []byte, error) {
	token, err := pki.EnsureToken(o.pkiDir())
	if err != nil {
		return nil, nil, nil, "", nil, err
	}
	tokens := map[string]user.Info{token: &user.DefaultInfo{Name: "strata-admin", Groups: []string{user.SystemPrivilegedGroup}}}
	if o.TokenAuthFile != "" {
		extra, err := authn.ParseTokenFile(o.TokenAuthFile)
		if err != nil {
			return nil, nil, nil, "", nil, err
		}
		for t, u := range extra {
			tokens[t] = u
		}
	}
	a := &authn.Authenticator{Tokens: tokens, Anonymous: anonymous, Refused: auditor.FailedAuthentication}
	tlsConfig := &tls.Config{MinVersion: tls.VersionTLS12, NextProtos: []string{"h2", "http/1.1"}}
	if o.ClientCAFile != "" {
		pemBytes, err := os.ReadFile(o.ClientCAFile)
		if err != nil {
			return nil, nil, nil, "", nil, fmt.Errorf("--client-ca-file: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pemBytes) {
			return nil, nil, nil, "", nil, fmt.Errorf("--client-ca-file %s: no PEM certificate in it", o.ClientCAFile)
		}
		a.ClientCA = pool
		authn.ClientAuthTLS(tlsConfig, pool)
	}
	if o.PlainHTTP {
		// Like kube-apiserver's old insecure port: clients do not send
		// bearer tokens over plain HTTP, so it is served without
		// authentication, on loopback only (Validate): as a member of
		// system:masters.
		return a, asPlainHTTPUser, nil, token, nil, nil
	}
	certFile, keyFile, caPEM := o.TLSCertFile, o.TLSPrivateKeyFile, []byte(nil)
	if certFile == "" {
		serving, err := pki.EnsureServing(o.pkiDir(), servingHosts(o.BindAddress))
		if err != nil {
			return nil, nil, nil, "", nil, err
		}
		certFile, keyFile, caPEM = serving.CertFile, serving.KeyFile, serving.CAPEM
	}
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, nil, nil, "", nil, fmt.Errorf("serving certificate %s: %w", certFile, err)
	}
	tlsConfig.Certificates = []tls.Certificate{cert}
	authenticate := func(next http.Handler) http.Handler { return authn.Middleware(a, next) }
	return a, authenticate, tlsConfig, token, caPEM, nil
}

func servingHosts(bind string) []string {
	hosts := []string{"127.0.0.1", "localhost", "::1"}
	if ip := net.ParseIP(bind); ip != nil && !ip.IsUnspecified() && !ip.IsLoopback() {
		hosts = append(hosts, bind)
	}
	return hosts
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
