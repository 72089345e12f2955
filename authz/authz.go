package authz

import (
	"context"
	"errors"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/wait"
	authzconfig "k8s.io/apiserver/pkg/apis/apiserver"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/client-go/informers"
	kubeauthorizer "k8s.io/kubernetes/pkg/kubeapiserver/authorizer"
	"k8s.io/kubernetes/pkg/kubeapiserver/authorizer/modes"
)

// Modes kube-apiserver knows, and its default for --authorization-mode
// as strata sets it (kube-apiserver's own default is AlwaysAllow; every
// installation sets RBAC).
const (
	ModeAlwaysAllow = modes.ModeAlwaysAllow
	ModeAlwaysDeny  = modes.ModeAlwaysDeny
	ModeABAC        = modes.ModeABAC
	ModeWebhook     = modes.ModeWebhook
	ModeRBAC        = modes.ModeRBAC
	ModeNode        = modes.ModeNode
	DefaultMode     = ModeRBAC
)

// Config says how to authorize.
type Config struct {
	// Modes are asked in order (--authorization-mode).
	Modes []string
	// PolicyFile is the ABAC policy (--authorization-policy-file).
	PolicyFile string
	// WebhookConfigFile is the kubeconfig of the authorization webhook
	// (--authorization-webhook-config-file), asked with
	// SubjectAccessReviews of WebhookVersion (default v1beta1, as
	// kube-apiserver's --authorization-webhook-version).
	WebhookConfigFile, WebhookVersion string
	// Informers give RBAC (and Node) the objects they read; the caller
	// starts them after New.
	Informers informers.SharedInformerFactory
}

// Authorizer is the server's authorizer and rule resolver.
type Authorizer struct {
	authorizer.Authorizer
	authorizer.RuleResolver
}

// Validate checks the modes and their files as kube-apiserver checks its
// flags, with its messages (which name the flags without dashes).
func (c Config) Validate() error {
	var errs []error
	if len(c.Modes) == 0 {
		errs = append(errs, errors.New("at least one authorization-mode must be passed"))
	}
	set := sets.New(c.Modes...)
	for _, mode := range c.Modes {
		if !modes.IsValidAuthorizationMode(mode) {
			errs = append(errs, fmt.Errorf("authorization-mode %q is not a valid mode", mode))
		}
		if mode == ModeABAC && c.PolicyFile == "" {
			errs = append(errs, errors.New("authorization-mode ABAC's authorization policy file not passed"))
		}
		if mode == ModeWebhook && c.WebhookConfigFile == "" {
			errs = append(errs, errors.New("authorization-mode Webhook's authorization config file not passed"))
		}
	}
	if c.PolicyFile != "" && !set.Has(ModeABAC) {
		errs = append(errs, errors.New("cannot specify --authorization-policy-file without mode ABAC"))
	}
	if c.WebhookConfigFile != "" && !set.Has(ModeWebhook) {
		errs = append(errs, errors.New("cannot specify --authorization-webhook-config-file without mode Webhook"))
	}
	if len(c.Modes) != set.Len() {
		errs = append(errs, fmt.Errorf("authorization-mode %q has mode specified more than once", c.Modes))
	}
	return errors.Join(errs...)
}

// webhookRetryBackoff is kube-apiserver's default
// (k8s.io/apiserver/pkg/server/options.DefaultAuthWebhookRetryBackoff).
var webhookRetryBackoff = wait.Backoff{Duration: 500 * time.Millisecond, Factor: 1.5, Jitter: 0.2, Steps: 5}

// New builds the authorizer of cfg as kube-apiserver builds it, and
// registers the informers its modes read. ctx bounds nothing yet (the
// authorizer configuration file, which kube-apiserver reloads, is not
// offered).
func New(ctx context.Context, cfg Config) (*Authorizer, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Informers == nil {
		return nil, errors.New("authz: an informer factory is required")
	}
	inf, err := newBindingsFactory(cfg.Informers)
	if err != nil {
		return nil, fmt.Errorf("authz: %w", err)
	}
	backoff := webhookRetryBackoff
	kc := kubeauthorizer.Config{PolicyFile: cfg.PolicyFile, WebhookRetryBackoff: &backoff,
		VersionedInformerFactory: inf, AuthorizationConfiguration: configuration(cfg)}
	a, rules, err := kc.New(ctx, "strata")
	if err != nil {
		return nil, fmt.Errorf("authorization: %w", err)
	}
	return &Authorizer{Authorizer: a, RuleResolver: rules}, nil
}

// configuration turns the modes into an AuthorizationConfiguration as
// kube-apiserver's options do (buildAuthorizationConfiguration): each mode
// named in lower case; the webhook "default" with the legacy flags' TTLs (5m
// allowed, 30s denied), a 30s timeout and no opinion on failure.
func configuration(cfg Config) *authzconfig.AuthorizationConfiguration {
	version := cfg.WebhookVersion
	if version == "" {
		version = "v1beta1"
	}
	out := &authzconfig.AuthorizationConfiguration{}
	for _, mode := range cfg.Modes {
		a := authzconfig.AuthorizerConfiguration{Type: authzconfig.AuthorizerType(mode),
			Name: kubeauthorizer.GetNameForAuthorizerMode(mode)}
		if mode == ModeWebhook {
			file := cfg.WebhookConfigFile
			a.Name = "default"
			a.Webhook = &authzconfig.WebhookConfiguration{
				AuthorizedTTL: durationOf(5 * time.Minute), CacheAuthorizedRequests: true,
				UnauthorizedTTL: durationOf(30 * time.Second), CacheUnauthorizedRequests: true,
				Timeout: durationOf(30 * time.Second), FailurePolicy: authzconfig.FailurePolicyNoOpinion,
				SubjectAccessReviewVersion: version,
				ConnectionInfo: authzconfig.WebhookConnectionInfo{
					Type: authzconfig.AuthorizationWebhookConnectionInfoTypeKubeConfigFile, KubeConfigFile: &file},
			}
		}
		out.Authorizers = append(out.Authorizers, a)
	}
	return out
}

func durationOf(d time.Duration) metav1.Duration { return metav1.Duration{Duration: d} }
