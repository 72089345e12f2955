package satoken

import (
	"crypto"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"k8s.io/apiserver/pkg/authentication/authenticator"
	token "k8s.io/kubernetes/pkg/serviceaccount"
)

// DefaultIssuer is kube-apiserver's usual --service-account-issuer (kubeadm's
// and kind's): the in-cluster name of the API.
const DefaultIssuer = "https://kubernetes.default.svc.cluster.local"

// Config describes an Issuer, one field per kube-apiserver flag.
type Config struct {
	// Issuers are the accepted "iss" claims; the first is written into
	// the tokens issued (--service-account-issuer).
	Issuers []string
	// APIAudiences are the audiences tokens are issued for when a request
	// names none, and those the API accepts (--api-audiences); default
	// Issuers.
	APIAudiences authenticator.Audiences
	// SigningKey signs tokens (an *rsa.PrivateKey or *ecdsa.PrivateKey).
	SigningKey crypto.Signer
	// VerifyKeys check tokens' signatures (public or private keys,
	// --service-account-key-file); default the signing key's public half.
	VerifyKeys []any
	// MaxExpiration shortens longer requested lifetimes (0: no bound;
	// --service-account-max-token-expiration).
	MaxExpiration time.Duration
	// ExtendExpiration: tokens of exactly 3607 seconds bound to a pod are
	// issued for a year, as kube-apiserver's
	// --service-account-extend-token-expiration (default true there).
	ExtendExpiration bool
	// JWKSURI is the jwks_uri of the discovery document; default
	// https://ADDRESS/openid/v1/jwks, ADDRESS the one DiscoveryHandler is
	// given (--service-account-jwks-uri).
	JWKSURI string
}

// Issuer signs and checks the tokens of one key set.
type Issuer struct {
	cfg       Config
	generator token.TokenGenerator
	keys      token.PublicKeysGetter
}

// New checks cfg as kube-apiserver checks its flags and builds the signer
// and the key set.
func New(cfg Config) (*Issuer, error) {
	if err := ValidateIssuers(cfg.Issuers); err != nil {
		return nil, err
	}
	if len(cfg.APIAudiences) == 0 {
		cfg.APIAudiences = authenticator.Audiences(cfg.Issuers)
	}
	if err := ValidateMaxExpiration(cfg.MaxExpiration); err != nil {
		return nil, err
	}
	if cfg.SigningKey == nil {
		return nil, errors.New("satoken: no signing key")
	}
	generator, err := token.JWTTokenGenerator(cfg.Issuers[0], cfg.SigningKey)
	if err != nil {
		return nil, fmt.Errorf("service-account signing key: %w", err)
	}
	verify := cfg.VerifyKeys
	if len(verify) == 0 {
		verify = []any{cfg.SigningKey.Public()}
	}
	keys, err := token.StaticPublicKeysGetter(verify)
	if err != nil {
		return nil, fmt.Errorf("failed to set up public service account keys: %w", err)
	}
	return &Issuer{cfg: cfg, generator: generator, keys: keys}, nil
}

// APIAudiences are the audiences the API accepts.
func (i *Issuer) APIAudiences() authenticator.Audiences { return i.cfg.APIAudiences }

// Generator is the signer of the issued tokens (tests sign tokens with it).
func (i *Issuer) Generator() token.TokenGenerator { return i.generator }

// ValidateIssuers is kube-apiserver's check of --service-account-issuer,
// with its messages.
func ValidateIssuers(issuers []string) error {
	if len(issuers) == 0 {
		return errors.New("service-account-issuer is a required flag")
	}
	var errs []error
	seen := map[string]bool{}
	for _, issuer := range issuers {
		if strings.Contains(issuer, ":") {
			if _, err := url.Parse(issuer); err != nil {
				errs = append(errs, fmt.Errorf("service-account-issuer %q contained a ':' but was not a valid URL: %v", issuer, err))
				continue
			}
		}
		switch {
		case issuer == "":
			errs = append(errs, errors.New("service-account-issuer should not be an empty string"))
		case seen[issuer]:
			errs = append(errs, fmt.Errorf("service-account-issuer %q is already specified", issuer))
		}
		seen[issuer] = true
	}
	return errors.Join(errs...)
}

// ValidateMaxExpiration is kube-apiserver's check of
// --service-account-max-token-expiration.
func ValidateMaxExpiration(d time.Duration) error {
	if d != 0 && (d < time.Hour || d > time.Duration(1<<32)*time.Second) {
		return errors.New("the service-account-max-token-expiration must be between 1 hour and 2^32 seconds")
	}
	return nil
}
