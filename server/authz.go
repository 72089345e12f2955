package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"

	"github.com/stratadev/strata/apiserver"
	"github.com/stratadev/strata/authz"
	"github.com/stratadev/strata/controllers"
)

// authzConfig is the authorizer's configuration from the flags.
func (o *Options) authzConfig(inf informers.SharedInformerFactory) authz.Config {
	return authz.Config{Modes: o.AuthorizationModes, PolicyFile: o.AuthorizationPolicyFile,
		WebhookConfigFile: o.AuthorizationWebhookConfigFile, Informers: inf}
}

// lateAuthorizer is the server's authorizer, handed to the API before it
// exists: the authorizer reads its informers through the loopback client,
// which serves the API. It is set before the server serves; until then
// (only the loopback client, in system:masters, reaches the API) it has no
// opinion.
type lateAuthorizer struct {
	a atomic.Pointer[authz.Authorizer]
}

var errAuthorizerNotReady = errors.New("the authorizer has not started")

func (l *lateAuthorizer) set(a *authz.Authorizer) { l.a.Store(a) }

// Authorize implements authorizer.Authorizer.
func (l *lateAuthorizer) Authorize(ctx context.Context, attrs authorizer.Attributes) (authorizer.Decision, string, error) {
	if a := l.a.Load(); a != nil {
		return a.Authorize(ctx, attrs)
	}
	return authorizer.DecisionNoOpinion, "", errAuthorizerNotReady
}

// ConditionsAwareAuthorize implements authorizer.Authorizer.
func (l *lateAuthorizer) ConditionsAwareAuthorize(ctx context.Context, attrs authorizer.Attributes) authorizer.ConditionsAwareDecision {
	if a := l.a.Load(); a != nil {
		return a.ConditionsAwareAuthorize(ctx, attrs)
	}
	return authorizer.ConditionsAwareDecisionFromParts(l.Authorize(ctx, attrs))
}

// EvaluateConditions implements authorizer.Authorizer.
func (l *lateAuthorizer) EvaluateConditions(ctx context.Context, d authorizer.ConditionsAwareDecision, data authorizer.ConditionsData) (authorizer.Decision, string, error) {
	if a := l.a.Load(); a != nil {
		return a.EvaluateConditions(ctx, d, data)
	}
	return authorizer.DecisionNoOpinion, "", errAuthorizerNotReady
}

// RulesFor implements authorizer.RuleResolver.
func (l *lateAuthorizer) RulesFor(ctx context.Context, u user.Info, namespace string) ([]authorizer.ResourceRuleInfo, []authorizer.NonResourceRuleInfo, bool, error) {
	if a := l.a.Load(); a != nil {
		return a.RulesFor(ctx, u, namespace)
	}
	return nil, nil, false, errAuthorizerNotReady
}

// plainHTTPUser is who requests over --plain-http are: like kube-apiserver's
// old insecure port (its "system:unsecured" superuser), a member of
// system:masters, since no credentials travel over plain HTTP.
var plainHTTPUser user.Info = &user.DefaultInfo{Name: "system:unsecured",
	Groups: []string{user.SystemPrivilegedGroup, user.AllAuthenticated}}

// asPlainHTTPUser authenticates every request as plainHTTPUser.
func asPlainHTTPUser(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(w, r.WithContext(request.WithUser(r.Context(), plainHTTPUser)))
	})
}

// authorization is the server's authorizer and its RBAC controllers,
// built once the shared informers exist (prepare) and running once they
// have started (wait).
type authorization struct {
	late      lateAuthorizer
	rbac      atomic.Pointer[controllers.RBAC]
	bootstrap chan error
}

func newAuthorization() *authorization { return &authorization{bootstrap: make(chan error, 1)} }

// ready is the /readyz check of the bootstrap policy.
func (a *authorization) ready(ctx context.Context) error {
	if r := a.rbac.Load(); r != nil {
		return r.Ready(ctx)
	}
	return errAuthorizerNotReady
}

// readyChecks are the /readyz checks of authorization.
func (a *authorization) readyChecks() []apiserver.HealthCheck {
	return []apiserver.HealthCheck{{Name: controllers.RBACBootstrapCheck, Check: a.ready, Quiet: true}}
}

// prepare builds the authorizer over sh's informers and starts
// creating the bootstrap policy through the loopback client.
func (a *authorization) prepare(ctx context.Context, o *Options, sh *shared) error {
	az, err := authz.New(ctx, o.authzConfig(sh.informers))
	if err != nil {
		return err
	}
	a.late.set(az)
	r := controllers.NewRBAC(sh.loop.Config())
	a.rbac.Store(r)
	go func() { a.bootstrap <- r.Bootstrap(ctx) }()
	return nil
}

// wait returns once the bootstrap policy is in place and the informers
// serving reads have listed (servingSynced), among them the authorizer's,
// so that a served request is decided on the policy.
func (a *authorization) wait(ctx context.Context, servingSynced, policySeen func(context.Context) error, clock *startClock) error {
	select {
	case err := <-a.bootstrap:
		if err != nil {
			return err
		}
	case <-ctx.Done():
		return fmt.Errorf("%s: %w", controllers.RBACBootstrapCheck, ctx.Err())
	}
	clock.step("rbac bootstrap")
	if err := servingSynced(ctx); err != nil {
		return fmt.Errorf("authorization: %w", err)
	}
	clock.step("informers synced")
	if err := policySeen(ctx); err != nil {
		return fmt.Errorf("authorization: %w", err)
	}
	clock.step("policy seen")
	return nil
}

// policySeen returns what waits until the RBAC authorizer's informers
// hold every object of the bootstrap policy. They may have listed before
// the bootstrap wrote it, and then learn it from their watches a moment
// later, and a request served in that moment would be refused with
// "clusterrole ... not found". Without RBAC it waits for nothing.
func policySeen(o *Options, inf informers.SharedInformerFactory) func(context.Context) error {
	if !slices.Contains(o.AuthorizationModes, authz.ModeRBAC) {
		return func(context.Context) error { return nil }
	}
	v1 := inf.Rbac().V1()
	clusterRoles, clusterRoleBindings, roles, roleBindings := controllers.PolicyKeys()
	want := []struct {
		store cache.Store
		keys  []string
	}{
		{v1.ClusterRoles().Informer().GetStore(), clusterRoles},
		{v1.ClusterRoleBindings().Informer().GetStore(), clusterRoleBindings},
		{v1.Roles().Informer().GetStore(), roles},
		{v1.RoleBindings().Informer().GetStore(), roleBindings},
	}
	return func(ctx context.Context) error {
		err := wait.PollUntilContextCancel(ctx, 5*time.Millisecond, true, func(context.Context) (bool, error) {
			for _, w := range want {
				for _, key := range w.keys {
					if _, ok, _ := w.store.GetByKey(key); !ok {
						return false, nil
					}
				}
			}
			return true, nil
		})
		if err != nil {
			return fmt.Errorf("the authorizer's informers have not seen the bootstrap policy: %w", err)
		}
		return nil
	}
}

// anonymous is the authenticator's rule for requests without credentials:
// with --anonymous-auth every such request is system:anonymous, for
// authorization to decide; kube-apiserver turns the flag off under the
// AlwaysAllow mode (with a warning), which would let anonymous users do
// everything.
func anonymous(o *Options, log *slog.Logger) func(*http.Request) bool {
	if !o.AnonymousAuth {
		return nil
	}
	if slices.Contains(o.AuthorizationModes, authz.ModeAlwaysAllow) {
		log.Warn("AnonymousAuth is not allowed with the AlwaysAllow authorizer. Resetting AnonymousAuth to false. You should use a different authorizer")
		return nil
	}
	return func(*http.Request) bool { return true }
}
