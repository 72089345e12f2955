package authn

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"crypto/x509"
	"net/http"
	"slices"
	"strings"
	"sync"

	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/user"
)

// Authenticator decides who sent a request.
type Authenticator struct {
	// Tokens maps bearer tokens to their users (see ParseTokenFile). It is
	// read once, at the first request, and not changed after.
	Tokens map[string]user.Info
	// More, when set, checks the bearer tokens Tokens does not name
	// (service-account JWTs): an error or a refusal makes the request
	// 401, as an unknown token does.
	More authenticator.Token
	// ClientCA, when set, authenticates requests whose TLS client
	// certificate it signed, for client authentication: the user is the
	// certificate's Common Name, the groups its Organizations.
	ClientCA *x509.CertPool
	// Anonymous, when set and true for a request that carries no
	// credentials, lets it through as system:anonymous. kube-apiserver
	// allows /healthz, /livez, /readyz and /version this way.
	Anonymous func(*http.Request) bool
	// Refused, when set, wraps the handler that answers 401 (the audit
	// log records refused credentials, as kube-apiserver's
	// WithFailedAuthenticationAudit does).
	Refused func(http.Handler) http.Handler
	// APIAudiences are the audiences Tokens are good for when a
	// TokenReview names audiences (AuthenticateToken).
	APIAudiences authenticator.Audiences

	// digestList holds Tokens' SHA-256 digests, computed once (at the
	// first request) rather than for every token at every request.
	once       sync.Once
	digestList []tokenDigest
}

// tokenDigest is one of Tokens, by its digest.
type tokenDigest struct {
	sum  [sha256.Size]byte
	user user.Info
}

// outcome of one way of authenticating.
type outcome int

const (
	absent  outcome = iota // no credentials of this kind
	valid                  // credentials that name a user
	invalid                // credentials that name nobody
)

// Authenticate returns the user r speaks for, or false when r must be
// refused with 401.
func (a *Authenticator) Authenticate(r *http.Request) (user.Info, bool) {
	u, ok, _ := a.authenticate(r)
	return u, ok
}

// authenticate is Authenticate that also tells whether the bearer token
// named the user.
func (a *Authenticator) authenticate(r *http.Request) (u user.Info, ok, byToken bool) {
	u, certResult := a.clientCert(r)
	if certResult == valid {
		return withAuthenticatedGroup(u), true, false
	}
	u, tokenResult := a.bearer(r)
	if tokenResult == valid {
		return withAuthenticatedGroup(u), true, true
	}
	if certResult == absent && tokenResult == absent && a.Anonymous != nil && a.Anonymous(r) {
		return &user.DefaultInfo{Name: user.Anonymous, Groups: []string{user.AllUnauthenticated}}, true, false
	}
	return nil, false, false
}

// bearer authenticates the token of an "Authorization: Bearer" header,
// parsed as kube-apiserver does: the scheme in any case, the token the
// second space-separated word, an empty token no credentials at all.
func (a *Authenticator) bearer(r *http.Request) (user.Info, outcome) {
	auth := strings.TrimSpace(r.Header.Get("Authorization"))
	parts := strings.SplitN(auth, " ", 3)
	if len(parts) < 2 || !strings.EqualFold(parts[0], "bearer") || parts[1] == "" {
		return nil, absent
	}
	return a.token(r.Context(), parts[1])
}

// token authenticates a bearer token: one of Tokens, or else one More
// accepts.
func (a *Authenticator) token(ctx context.Context, token string) (user.Info, outcome) {
	if found := a.static(token); found != nil {
		return found, valid
	}
	if a.More != nil {
		if resp, ok, err := a.More.AuthenticateToken(ctx, token); ok && err == nil {
			return resp.User, valid
		}
	}
	return nil, invalid
}

// static is the user of one of Tokens, or nil.
func (a *Authenticator) static(token string) user.Info {
	// Every token is compared, in constant time over digests of equal
	// length, so neither the time taken nor an early exit tells which
	// prefix or which token length came close.
	got := sha256.Sum256([]byte(token))
	var found user.Info
	for _, d := range a.tokenDigests() {
		if subtle.ConstantTimeCompare(got[:], d.sum[:]) == 1 {
			found = d.user
		}
	}
	return found
}

// tokenDigests are Tokens' digests. Tokens is read once, at the first call.
func (a *Authenticator) tokenDigests() []tokenDigest {
	a.once.Do(func() {
		for t, u := range a.Tokens {
			a.digestList = append(a.digestList, tokenDigest{sha256.Sum256([]byte(t)), u})
		}
	})
	return a.digestList
}

// AuthenticateToken implements authenticator.Token for TokenReviews: the
// user a bearer token names, with system:authenticated, as requests with
// that token are authenticated. Tokens are for no audience in
// particular: as kube-apiserver wraps its token file
// (authenticator.WrapAudienceAgnosticToken over --api-audiences), a
// review that asks for audiences gets them only where they are among
// APIAudiences, and else no user. More's answer, audiences included, is
// kept.
func (a *Authenticator) AuthenticateToken(ctx context.Context, token string) (*authenticator.Response, bool, error) {
	if token == "" {
		return nil, false, nil
	}
	static := authenticator.TokenFunc(func(context.Context, string) (*authenticator.Response, bool, error) {
		if u := a.static(token); u != nil {
			return &authenticator.Response{User: withAuthenticatedGroup(u)}, true, nil
		}
		return nil, false, nil
	})
	if resp, ok, _ := authenticator.WrapAudienceAgnosticToken(a.APIAudiences, static).AuthenticateToken(ctx, token); ok {
		return resp, true, nil
	}
	if a.More != nil {
		if resp, ok, err := a.More.AuthenticateToken(ctx, token); ok && err == nil {
			out := *resp
			out.User = withAuthenticatedGroup(resp.User)
			return &out, true, nil
		}
	}
	return nil, false, nil
}

// clientCert authenticates the TLS client certificate of r against
// ClientCA, with the other certificates the client sent as intermediates.
func (a *Authenticator) clientCert(r *http.Request) (user.Info, outcome) {
	if a.ClientCA == nil || r.TLS == nil || len(r.TLS.PeerCertificates) == 0 {
		return nil, absent
	}
	leaf := r.TLS.PeerCertificates[0]
	opts := x509.VerifyOptions{
		Roots:         a.ClientCA,
		Intermediates: x509.NewCertPool(),
		KeyUsages:     []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	for _, c := range r.TLS.PeerCertificates[1:] {
		opts.Intermediates.AddCert(c)
	}
	if _, err := leaf.Verify(opts); err != nil || leaf.Subject.CommonName == "" {
		return nil, invalid
	}
	return &user.DefaultInfo{Name: leaf.Subject.CommonName, Groups: slices.Clone(leaf.Subject.Organization)}, valid
}

// withAuthenticatedGroup adds system:authenticated to the groups of u, as
// kube-apiserver does for every user it authenticates.
func withAuthenticatedGroup(u user.Info) user.Info {
	groups := u.GetGroups()
	if slices.Contains(groups, user.AllAuthenticated) || slices.Contains(groups, user.AllUnauthenticated) {
		return u
	}
	return &user.DefaultInfo{
		Name:   u.GetName(),
		UID:    u.GetUID(),
		Groups: append(slices.Clip(groups), user.AllAuthenticated),
		Extra:  u.GetExtra(),
	}
}
