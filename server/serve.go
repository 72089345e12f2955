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
	"os"
	"strconv"
	"time"

	"k8s.io/apiserver/pkg/authentication/user"

	"github.com/stratadev/strata/apiserver"
	"github.com/stratadev/strata/apiserver/authn"
	"github.com/stratadev/strata/apiserver/filters"
	"github.com/stratadev/strata/apiserver/filters/audit"
	"github.com/stratadev/strata/apiserver/filters/authorize"
	"github.com/stratadev/strata/apiserver/filters/timeout"
	"github.com/stratadev/strata/internal/pki"
)

// The listener and its serving: the filter chain, TLS and HTTP/2, the
// kubeconfig that names the URL, and the graceful shutdown.

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
