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
	"k8s.io/klog/v2"

	"github.com/stratadev/strata/apiserver"
	"github.com/stratadev/strata/apiserver/authn"
	"github.com/stratadev/strata/apiserver/filters"
	"github.com/stratadev/strata/apiserver/filters/audit"
	"github.com/stratadev/strata/apiserver/filters/authorize"
	"github.com/stratadev/strata/apiserver/filters/timeout"
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
	// which take a second of CPU between them (issue 18); startEtcd makes
	// the credentials likewise.
	early := earlyWork{openAPI: apiserver.BuildOpenAPI(registry.Builtin(), versionInfo().GitVersion),
		credentialsBefore: credentialFiles(o)}
	go func() { _ = registry.WarmFieldManagers() }() // apiserver.New reports an error
	etcdCtx, stopEtcd := context.WithCancel(context.Background())
	etcdSrv, client, err := startEtcd(etcdCtx, o)
	if err != nil {
		stopEtcd()
		return nil, err
	}
	local := etcdSrv.Local(client)
	cleanup := func() {
		local.Close()
		client.Close()
		stopEtcd()
		<-etcdSrv.Done()
	}
	clock.step("etcd")
	r, err := startAPI(ctx, o, local, log, clock, early, cleanup)
	if err != nil {
		cleanup()
		return nil, err
	}
	return r, nil
}

func startEtcd(ctx context.Context, o *Options) (*etcd.Server, *clientv3.Client, error) {
	// The embedded member logs only fatal errors: at its level "error" it
	// reports its own listeners closing at every shutdown; its real
	// failures reach the user through the API's errors and /readyz.
	cfg, err := etcd.Options{DataDir: o.etcdDir(), Servers: o.EtcdServers, LogLevel: "fatal",
		CAFile: o.EtcdCAFile, CertFile: o.EtcdCertFile, KeyFile: o.EtcdKeyFile,
		QuotaBackendBytes: o.QuotaBackendBytes}.Complete()
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
// bootstrap and the compactor use local.Client (for the embedded member,
// their reads and writes in-process); the space guard, which asks each
// member endpoint for its status and defragments it, dials.
func startAPI(ctx context.Context, o *Options, local etcd.Local, log *slog.Logger, clock *startClock,
	early earlyWork, cleanup func()) (*Running, error) {
	client := local.Client
	compat, _ := o.patchCompat()
	metrics := filters.Default()
	serviceIPs, nodePorts, _ := o.serviceRanges()
	// undo, run backwards, stops what has started when a later step fails.
	var undo []func()
	fail := func(err error) (*Running, error) {
		for i := len(undo) - 1; i >= 0; i-- {
			undo[i]()
		}
		return nil, err
	}
	auditor, err := audit.New(o.Audit)
	if err != nil {
		return nil, err
	}
	undo = append(undo, func() { auditor.Close() })
	sa, err := newServiceAccounts(o)
	if err != nil {
		return fail(err)
	}
	tokenREST, err := sa.issuer.TokenREST(sa.client, nil)
	if err != nil {
		return fail(err)
	}
	authenticator, authenticate, tlsConfig, token, caPEM, err := secure(o, auditor, anonymous(o, log))
	if err != nil {
		return fail(err)
	}
	logNewCredentials(log, early.credentialsBefore, credentialFiles(o))
	clock.step("credentials")
	authenticator.APIAudiences = sa.issuer.APIAudiences()
	az := newAuthorization()
	adm := &lateAdmission{}
	space := storage.NewSpaceGuard(local.Dialed(), log)
	api, err := apiserver.New(apiserver.Config{Client: client, NewWatcher: local.NewWatcher, OpenAPI: early.openAPI, PatchCompat: compat, Version: versionInfo(), Logger: log,
		Metrics: metrics, ServiceClusterIPRange: serviceIPs, ServiceNodePortRange: nodePorts,
		WebhookAuthWrapper: serviceDial(o.webhookDial),
		Authorizer:         &az.late, RuleResolver: &az.late, Admission: adm, WithoutNamespaceLifecycle: !o.Admission.NamespaceLifecycle(), TokenAuthenticator: authenticator,
		TokenRequest: tokenREST, APIAudiences: sa.issuer.APIAudiences(), ExtraHandlers: extraHandlers(o, sa),
		Storage: o.tuneStorage, ReadyChecks: append(az.readyChecks(), apiserver.HealthCheck{Name: "etcd-space", Check: space.Check})})
	if err != nil {
		return fail(err)
	}
	undo = append(undo, api.Close)
	clock.step("api")
	readyCtx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	if err := api.WaitReady(readyCtx); err != nil {
		return fail(err)
	}
	clock.step("stores ready")
	if err := api.EnsureNamespaces(readyCtx); err != nil {
		return fail(err)
	}
	clock.step("namespaces")
	sh, err := newShared(api)
	if err != nil {
		return fail(err)
	}
	undo = append(undo, sh.close)
	// Service-account tokens are checked on the shared informers; nothing
	// is served before this.
	sa.bind(sh)
	authenticator.More = sa.authenticator(o, sh)
	if err := az.prepare(readyCtx, o, sh); err != nil {
		return fail(err)
	}
	clock.step("authorizer")
	handler := filters.Chain(api.Handler(), filters.Config{
		MaxRequestsInFlight:         o.MaxRequestsInFlight,
		MaxMutatingRequestsInFlight: o.MaxMutatingRequestsInFlight,
		Bound:                       func(h http.Handler) http.Handler { return timeout.Bound(h, o.RequestTimeout) },
		Authenticate:                authenticate,
		Audit:                       func(h http.Handler) http.Handler { return auditor.Audit(h, filters.IsLongRunning) },
		Impersonate:                 impersonate(o.PlainHTTP, &az.late),
		Authorize:                   authorize.New(&az.late),
		KnownResource:               api.KnownResource,
		Metrics:                     metrics,
		Logger:                      log,
	})
	handler = auditor.Init(handler)
	if o.PlainHTTP {
		handler = plainHTTPGuard(handler)
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(o.BindAddress, strconv.Itoa(o.SecurePort)))
	if err != nil {
		return fail(fmt.Errorf("listening on %s:%d: %w", o.BindAddress, o.SecurePort, err))
	}
	undo = append(undo, func() { ln.Close() })
	sa.serveDiscovery(ln.Addr(), log)
	// The informers serving reads (the authorizer's, the authenticator's,
	// the admission plugins', the webhooks' service resolver's) are
	// requested and started before the controllers request theirs, so
	// that readiness waits for these only (shared.startServing).
	// warm closes once the OpenAPI v3 documents are built and encoded,
	// after serving: the MutatingAdmissionPolicy plugin's first
	// /openapi/v3 poll waits for it (admission/openapiwait.go).
	warm := make(chan struct{})
	chain, err := newAdmission(o, sh, az, ln.Addr(), warm)
	if err != nil {
		return fail(err)
	}
	webhooks, err := apiserver.NewEndpointServiceResolver(sh.informers, &url.URL{Scheme: "https", Host: dialAddress(ln.Addr())})
	if err != nil {
		return fail(err)
	}
	// Before startServing, which starts every informer asked for so far.
	seen := policySeen(o, sh.informers)
	servingSynced := sh.startServing()
	clock.step("admission")
	// Before serving, so that a ready server has repaired its allocations
	// and a shutdown never meets them half started.
	kubernetesService, err := startKubernetesService(readyCtx, o, sh, client, ln.Addr().(*net.TCPAddr).Port, log)
	if err != nil {
		return fail(err)
	}
	undo = append(undo, kubernetesService.Stop)
	stopAuthenticationInfo, err := startAuthenticationInfo(o, sh)
	if err != nil {
		return fail(err)
	}
	undo = append(undo, stopAuthenticationInfo)
	clock.step("kubernetes service")
	adm.c.Store(chain)
	api.SetServiceResolver(webhooks)
	if err := az.wait(readyCtx, servingSynced, seen, clock); err != nil {
		return fail(err)
	}
	if err := api.WaitOpenAPI(readyCtx); err != nil {
		return fail(err)
	}
	clock.step("openapi")
	// The kube-controller-manager controllers start once the API is
	// ready, as they would in a process of their own: their first lists
	// (with many objects, seconds of CPU: the ConfigMaps, the garbage
	// collector's metadata of everything) are not the API's start-up.
	// Before serving (they reach the API in-process), so that a shutdown
	// never meets them half started.
	stopControllers := startControllers(o, sh, caPEM, log)
	undo = append(undo, stopControllers)
	sh.start()
	clock.step("controllers")
	scheme := "https"
	if o.PlainHTTP {
		scheme = "http"
	}
	r := &Running{URL: scheme + "://" + dialAddress(ln.Addr()), Kubeconfig: o.kubeconfigPath(), done: make(chan error, 1), handler: handler}
	if err := pki.WriteKubeconfig(r.Kubeconfig, r.URL, caPEM, token); err != nil {
		return fail(err)
	}
	httpSrv := &http.Server{Handler: handler, TLSConfig: tlsConfig, ReadHeaderTimeout: 30 * time.Second,
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelDebug)}
	if !o.PlainHTTP {
		if err := apiserver.ConfigureHTTP2(httpSrv); err != nil {
			return fail(err)
		}
	}
	compactCtx, stopCompaction := context.WithCancel(context.Background())
	if o.CompactionInterval >= 0 {
		go storage.NewCompactor(client, o.CompactionInterval, log).Run(compactCtx)
	}
	go space.Run(compactCtx, 0) // recovers from etcd's NOSPACE alarm
	serveErr := make(chan error, 1)
	go func() {
		if o.PlainHTTP {
			serveErr <- httpSrv.Serve(ln)
		} else {
			serveErr <- httpSrv.ServeTLS(ln, "", "")
		}
	}()
	if o.PlainHTTP {
		log.Warn("serving plain HTTP without authentication: any local process can use the API", "url", r.URL)
	}
	clock.step("serving")
	go func() {
		// On one goroutine, once a client has seen the server ready (or
		// after openAPIWarmWait): on two cores its half second of CPU
		// delayed the first /readyz 200 of an empty start by about 0.12 s
		// (issue 18). A document asked for before is built on demand.
		select {
		case <-api.SeenReady():
		case <-time.After(openAPIWarmWait):
		}
		api.WarmOpenAPI(context.Background())
		close(warm)
	}()
	log.Info("strata server is serving", "url", r.URL, "kubeconfig", r.Kubeconfig, "dataDir", o.DataDir)
	go func() {
		var err error
		select {
		case <-ctx.Done():
		case err = <-serveErr:
		}
		shutdownCtx, cancel := context.WithTimeout(context.Background(), o.ShutdownTimeout)
		defer cancel()
		// Watches end first (cleanly: clients see the stream end), then
		// the listener closes and the requests in flight finish, and only
		// then do the stores stop.
		log.Info("strata server is shutting down: ending watches and finishing requests in flight")
		kubernetesService.Stop() // takes this server out of the kubernetes endpoints, through the API
		stopAuthenticationInfo()
		api.EndWatches()
		stopControllers()
		sh.close()
		if shutdownErr := httpSrv.Shutdown(shutdownCtx); err == nil {
			err = shutdownErr
		}
		api.Close()
		auditor.Close()
		stopCompaction()
		cleanup()
		if errors.Is(err, http.ErrServerClosed) {
			err = nil
		}
		log.Info("strata server stopped")
		r.done <- err
	}()
	return r, nil
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
