package server

import (
	"crypto"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/keyutil"

	"github.com/stratadev/strata/internal/pki"
	"github.com/stratadev/strata/satoken"
)

// DefaultServiceAccountIssuer is --service-account-issuer's default.
const DefaultServiceAccountIssuer = satoken.DefaultIssuer

// ServiceAccountOptions configure service-account tokens, one field per
// kube-apiserver flag of the same name.
type ServiceAccountOptions struct {
	// Issuers (--service-account-issuer) are the accepted "iss" claims;
	// the first signs. Default satoken.DefaultIssuer.
	Issuers []string
	// APIAudiences (--api-audiences): default the issuers.
	APIAudiences []string
	// KeyFiles (--service-account-key-file) hold the PEM public or
	// private keys that verify tokens; default the signing key.
	KeyFiles []string
	// SigningKeyFile (--service-account-signing-key-file) holds the
	// private key that signs tokens; default sa.key in the data
	// directory, made at the first start.
	SigningKeyFile string
	// MaxTokenExpiration (--service-account-max-token-expiration) bounds
	// the lifetime of issued tokens (0: unbounded; else 1h to 2^32 s).
	MaxTokenExpiration time.Duration
	// ExtendTokenExpiration (--service-account-extend-token-expiration,
	// default true) issues pod-bound tokens requested for 3607 s for a
	// year, as kube-apiserver does for its projected-token transition.
	ExtendTokenExpiration bool
	// JWKSURI (--service-account-jwks-uri) is the discovery document's
	// jwks_uri; default https://ADDRESS/openid/v1/jwks, ADDRESS the one
	// the server is reached at.
	JWKSURI string
}

func (o ServiceAccountOptions) validate() error {
	errs := []error{satoken.ValidateMaxExpiration(o.MaxTokenExpiration)}
	if len(o.Issuers) > 0 {
		errs = append(errs, satoken.ValidateIssuers(o.Issuers))
	}
	return errors.Join(errs...)
}

// serviceAccounts are the server's service-account pieces: the issuer,
// the TokenRequest REST and the OIDC discovery handler, the last two
// bound once the loopback client and the listener exist.
type serviceAccounts struct {
	issuer *satoken.Issuer
	// client is the loopback client TokenREST reads through, set by bind
	// before the server serves.
	client    *deferredClient
	discovery lateHandler
}

// newServiceAccounts loads or makes the keys and builds the issuer.
func newServiceAccounts(o *Options) (*serviceAccounts, error) {
	so := o.ServiceAccounts
	signing, err := signingKey(o)
	if err != nil {
		return nil, err
	}
	var verify []any
	for _, f := range so.KeyFiles {
		keys, err := keyutil.PublicKeysFromFile(f)
		if err != nil {
			return nil, fmt.Errorf("--service-account-key-file: %w", err)
		}
		verify = append(verify, keys...)
	}
	if len(verify) > 0 {
		// The signing key verifies too: kube-apiserver asks for it in
		// --service-account-key-file; strata adds it.
		verify = append(verify, signing.Public())
	}
	issuers := so.Issuers
	if len(issuers) == 0 {
		issuers = []string{DefaultServiceAccountIssuer}
	}
	issuer, err := satoken.New(satoken.Config{Issuers: issuers, APIAudiences: so.APIAudiences,
		SigningKey: signing, VerifyKeys: verify, MaxExpiration: so.MaxTokenExpiration,
		ExtendExpiration: so.ExtendTokenExpiration, JWKSURI: so.JWKSURI})
	if err != nil {
		return nil, err
	}
	return &serviceAccounts{issuer: issuer, client: &deferredClient{}}, nil
}

func signingKey(o *Options) (crypto.Signer, error) {
	if f := o.ServiceAccounts.SigningKeyFile; f != "" {
		key, err := keyutil.PrivateKeyFromFile(f)
		if err != nil {
			return nil, fmt.Errorf("--service-account-signing-key-file: failed to parse service-account-issuer-key-file: %w", err)
		}
		signer, ok := key.(crypto.Signer)
		if !ok {
			return nil, fmt.Errorf("--service-account-signing-key-file %s: a %T cannot sign", f, key)
		}
		return signer, nil
	}
	return pki.EnsureServiceAccountKey(o.pkiDir())
}

// extraHandlers are the paths the API serves besides its own: the OIDC
// discovery documents.
func (s *serviceAccounts) extraHandlers() map[string]http.Handler {
	return map[string]http.Handler{satoken.OpenIDConfigPath: &s.discovery, satoken.JWKSPath: &s.discovery}
}

// bind gives TokenREST the loopback client.
func (s *serviceAccounts) bind(sh *shared) { s.client.Interface = sh.client }

// authenticator checks service-account tokens with the shared informers;
// nil for plain HTTP, which authenticates nobody.
func (s *serviceAccounts) authenticator(o *Options, sh *shared) authenticator.Token {
	if o.PlainHTTP {
		return nil
	}
	return s.issuer.Authenticator(sh.client, sh.informers)
}

// serveDiscovery serves the OIDC documents naming addr as the jwks_uri's
// host; an issuer that is not an https URL leaves them unserved (404) with
// an error in the log, as kube-apiserver does.
func (s *serviceAccounts) serveDiscovery(addr net.Addr, log *slog.Logger) {
	h, err := s.issuer.DiscoveryHandler(dialAddress(addr))
	if err != nil {
		log.Error("Could not construct pre-rendered responses for ServiceAccountIssuerDiscovery endpoints. Endpoints will not be enabled.", "err", err)
		return
	}
	s.discovery.h.Store(&h)
}

// deferredClient is the loopback client, which exists only once the API
// does, for TokenREST, which the API is built with.
type deferredClient struct{ kubernetes.Interface }

// lateHandler serves 404 until its handler is set.
type lateHandler struct{ h atomic.Pointer[http.Handler] }

func (l *lateHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h := l.h.Load(); h != nil {
		(*h).ServeHTTP(w, r)
		return
	}
	http.NotFound(w, r)
}
