package server

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	rbacv1 "k8s.io/api/rbac/v1"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"gopkg.in/go-jose/go-jose.v2"
	"gopkg.in/go-jose/go-jose.v2/jwt"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	api "k8s.io/kubernetes/pkg/apis/core"
	token "k8s.io/kubernetes/pkg/serviceaccount"
	"k8s.io/utils/ptr"

	"github.com/stratadev/strata/internal/pki"
	"github.com/stratadev/strata/satoken"
)

// saServer is a started server, its admin client and its request log.
type saServer struct {
	o      *Options
	r      *Running
	admin  *rest.Config
	client kubernetes.Interface
	log    *syncBuffer
}

func startSAServer(t *testing.T) *saServer {
	t.Helper()
	o := NewOptions()
	o.DataDir, o.SecurePort = t.TempDir(), 0
	buf := &syncBuffer{}
	// At Debug: the request lines name the service account (TestServiceAccounts).
	o.Logger = slog.New(slog.NewTextHandler(buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	r, admin := start(t, o)
	return &saServer{o: o, r: r, admin: admin, client: kubernetes.NewForConfigOrDie(admin), log: buf}
}

// as is a client that authenticates with a bearer token.
func (s *saServer) as(tok string) kubernetes.Interface {
	c := rest.AnonymousClientConfig(s.admin)
	c.BearerToken = tok
	return kubernetes.NewForConfigOrDie(c)
}

// eventually polls cond until it holds: the informers that the token
// authenticator reads see a deletion a moment after it is made.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 20*time.Millisecond, 30*time.Second, true,
		func(context.Context) (bool, error) { return cond(), nil })
	if err != nil {
		t.Fatalf("%s: never happened", what)
	}
}

func (s *saServer) createSA(t *testing.T, ns, name string) *corev1.ServiceAccount {
	t.Helper()
	sa, err := s.client.CoreV1().ServiceAccounts(ns).Create(context.Background(),
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return sa
}

func (s *saServer) token(t *testing.T, ns, name string, spec authenticationv1.TokenRequestSpec) string {
	t.Helper()
	tr, err := s.client.CoreV1().ServiceAccounts(ns).CreateToken(context.Background(), name,
		&authenticationv1.TokenRequest{Spec: spec}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return tr.Status.Token
}

// statusOf is the HTTP status of a GET of the namespace's ServiceAccounts
// with tok.
func (s *saServer) statusOf(tok, ns string) int {
	// A SelfSubjectReview, which RBAC lets every authenticated user make:
	// the answer is the token's authentication alone.
	_, err := s.as(tok).AuthenticationV1().SelfSubjectReviews().Create(context.Background(),
		&authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err == nil {
		return http.StatusOK
	}
	return int(statusCode(err))
}

func statusCode(err error) int32 {
	if s, ok := err.(apierrors.APIStatus); ok {
		return s.Status().Code
	}
	return -1
}

// TestServiceAccounts runs the service-account scenarios on one server:
// controllers, TokenRequest, authentication with the tokens, and OIDC
// discovery.
func TestServiceAccounts(t *testing.T) {
	s := startSAServer(t)
	ctx := context.Background()
	if _, err := s.client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team"}},
		metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Run("controllers", func(t *testing.T) { testSAControllers(t, s) })
	t.Run("identity", func(t *testing.T) { testSAIdentity(t, s) })
	t.Run("invalidated", func(t *testing.T) { testSAInvalidated(t, s) })
	t.Run("errors", func(t *testing.T) { testTokenRequestErrors(t, s) })
	t.Run("discovery", func(t *testing.T) { testOIDCDiscovery(t, s) })
}

// testSAControllers: a new namespace gets the default ServiceAccount and
// kube-root-ca.crt (the CA of the kubeconfig); both come back when
// deleted, and the ConfigMap's data is restored when changed.
func testSAControllers(t *testing.T, s *saServer) {
	ctx := context.Background()
	sas, cms := s.client.CoreV1().ServiceAccounts("team"), s.client.CoreV1().ConfigMaps("team")
	getSA := func() *corev1.ServiceAccount {
		sa, err := sas.Get(ctx, "default", metav1.GetOptions{})
		if err != nil {
			return nil
		}
		return sa
	}
	rootCA := func() string {
		cm, err := cms.Get(ctx, "kube-root-ca.crt", metav1.GetOptions{})
		if err != nil {
			return ""
		}
		return cm.Data["ca.crt"]
	}
	want := string(s.admin.CAData)
	eventually(t, "default ServiceAccount in a new namespace", func() bool { return getSA() != nil })
	eventually(t, "kube-root-ca.crt in a new namespace", func() bool { return rootCA() == want })

	first := getSA()
	if err := sas.Delete(ctx, "default", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "default ServiceAccount recreated", func() bool { sa := getSA(); return sa != nil && sa.UID != first.UID })
	if err := cms.Delete(ctx, "kube-root-ca.crt", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "kube-root-ca.crt recreated", func() bool { return rootCA() == want })
	cm, err := cms.Get(ctx, "kube-root-ca.crt", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm.Data["ca.crt"] = "tampered"
	if _, err := cms.Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "kube-root-ca.crt restored", func() bool { return rootCA() == want })
	if !strings.HasPrefix(want, "-----BEGIN CERTIFICATE-----") {
		t.Errorf("the kubeconfig's CA is not PEM: %q", want)
	}
}

// testSAIdentity: a token from TokenRequest authenticates as the account,
// with the defaults of the request filled in.
func testSAIdentity(t *testing.T, s *saServer) {
	ctx := context.Background()
	s.createSA(t, "team", "builder")
	before := time.Now()
	tr, err := s.client.CoreV1().ServiceAccounts("team").CreateToken(ctx, "builder",
		&authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(authenticationv1.TokenRequestSpec{Audiences: []string{satoken.DefaultIssuer},
		ExpirationSeconds: ptr.To[int64](3600)}, tr.Spec); diff != "" {
		t.Errorf("spec (-want +got):\n%s", diff)
	}
	if tr.Name != "builder" || tr.Namespace != "team" {
		t.Errorf("TokenRequest %s/%s, want team/builder", tr.Namespace, tr.Name)
	}
	exp := tr.Status.ExpirationTimestamp.Time
	if exp.Before(before.Add(3600*time.Second).Truncate(time.Second)) || exp.After(time.Now().Add(3600*time.Second)) {
		t.Errorf("expirationTimestamp %s, want an hour from now", exp)
	}
	review, err := s.as(tr.Status.Token).AuthenticationV1().SelfSubjectReviews().Create(ctx,
		&authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ui := review.Status.UserInfo
	if ui.Username != "system:serviceaccount:team:builder" ||
		!slices.Equal(ui.Groups, []string{"system:serviceaccounts", "system:serviceaccounts:team", "system:authenticated"}) {
		t.Errorf("the token's user: %+v", ui)
	}
	// RBAC applies to the account: nothing beyond the basic roles until it
	// is bound.
	client := s.as(tr.Status.Token).CoreV1().ServiceAccounts("team")
	_, err = client.List(ctx, metav1.ListOptions{})
	if want := `serviceaccounts is forbidden: User "system:serviceaccount:team:builder" cannot list resource "serviceaccounts" in API group "" in the namespace "team"`; !apierrors.IsForbidden(err) || err.Error() != want {
		t.Errorf("unbound account listing: %v, want %q", err, want)
	}
	binding := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "builder-view"},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "view"},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: "builder", Namespace: "team"}}}
	if _, err := s.client.RbacV1().RoleBindings("team").Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the bound account lists", func() bool {
		list, err := client.List(ctx, metav1.ListOptions{})
		return err == nil && len(list.Items) > 0
	})
	if line := "user=system:serviceaccount:team:builder"; !strings.Contains(s.log.String(), line) {
		t.Errorf("no request logged with %s", line)
	}
}

// testSAInvalidated: a token stops working (401) when its account is
// deleted, stays refused when the account is recreated (another UID), and
// a pod-bound token stops working when the pod is deleted; an expired
// token, signed with the server's key, is refused.
func testSAInvalidated(t *testing.T, s *saServer) {
	ctx := context.Background()
	sas := s.client.CoreV1().ServiceAccounts("team")
	s.createSA(t, "team", "temp")
	tok := s.token(t, "team", "temp", authenticationv1.TokenRequestSpec{})
	if got := s.statusOf(tok, "team"); got != http.StatusOK {
		t.Fatalf("fresh token: %d", got)
	}
	if err := sas.Delete(ctx, "temp", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "401 once the account is deleted", func() bool { return s.statusOf(tok, "team") == http.StatusUnauthorized })
	s.createSA(t, "team", "temp")
	if got := s.statusOf(tok, "team"); got != http.StatusUnauthorized {
		t.Errorf("account recreated with another UID: %d, want 401", got)
	}

	s.createSA(t, "team", "runner")
	pod, err := s.client.CoreV1().Pods("team").Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "job"},
		Spec: corev1.PodSpec{ServiceAccountName: "runner", Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}},
		metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	podTok := s.token(t, "team", "runner", authenticationv1.TokenRequestSpec{
		BoundObjectRef: &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: "job", UID: pod.UID}})
	if got := s.statusOf(podTok, "team"); got != http.StatusOK {
		t.Fatalf("pod-bound token: %d", got)
	}
	if err := s.client.CoreV1().Pods("team").Delete(ctx, "job", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "401 once the pod is deleted", func() bool { return s.statusOf(podTok, "team") == http.StatusUnauthorized })
	if got := s.statusOf(s.token(t, "team", "runner", authenticationv1.TokenRequestSpec{}), "team"); got != http.StatusOK {
		t.Errorf("unbound token of the same account: %d, want 200", got)
	}

	runner, err := sas.Get(ctx, "runner", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := s.statusOf(expiredToken(t, s, runner), "team"); got != http.StatusUnauthorized {
		t.Errorf("expired token: %d, want 401", got)
	}
}

// expiredToken signs, with the server's key, a token of sa that expired
// an hour ago.
func expiredToken(t *testing.T, s *saServer, sa *corev1.ServiceAccount) string {
	t.Helper()
	key, err := pki.EnsureServiceAccountKey(s.o.pkiDir())
	if err != nil {
		t.Fatal(err)
	}
	gen, err := token.JWTTokenGenerator(satoken.DefaultIssuer, key)
	if err != nil {
		t.Fatal(err)
	}
	internal := api.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa.Name, Namespace: sa.Namespace, UID: sa.UID}}
	claims, private, err := token.Claims(internal, nil, nil, nil, nil, nil, 3600, 0, []string{satoken.DefaultIssuer}, nil)
	if err != nil {
		t.Fatal(err)
	}
	past := time.Now().Add(-2 * time.Hour)
	claims.IssuedAt, claims.NotBefore, claims.Expiry = jwt.NewNumericDate(past), jwt.NewNumericDate(past), jwt.NewNumericDate(past.Add(time.Hour))
	tok, err := gen.GenerateToken(context.Background(), claims, private)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// testTokenRequestErrors: kube-apiserver's refusals, with its statuses and
// messages.
func testTokenRequestErrors(t *testing.T, s *saServer) {
	ctx := context.Background()
	s.createSA(t, "team", "other")
	_, err := s.client.CoreV1().Pods("team").Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: corev1.PodSpec{ServiceAccountName: "builder", Containers: []corev1.Container{{Name: "c", Image: "nginx"}}}},
		metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	podRef := func(name string, uid string) *authenticationv1.BoundObjectReference {
		return &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: name, UID: types.UID(uid)}
	}
	tests := []struct {
		name, account string
		req           authenticationv1.TokenRequest
		code          int32
		message       string
	}{
		{name: "short expiration", account: "builder",
			req:  authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](599)}},
			code: 422, message: `TokenRequest.authentication.k8s.io "" is invalid: spec.expirationSeconds: Invalid value: 599: may not specify a duration less than 10 minutes`},
		{name: "unknown account", account: "nobody", code: 404, message: `serviceaccounts "nobody" not found`},
		{name: "pod of another account", account: "other", req: authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{BoundObjectRef: podRef("web", "")}},
			code: 400, message: `cannot bind token for serviceaccount "other" to pod running with different serviceaccount name.`},
		{name: "pod UID mismatch", account: "builder", req: authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{BoundObjectRef: podRef("web", "0000")}},
			code: 409, message: `Operation cannot be fulfilled on Pod "web": the UID in the bound object reference (0000) does not match the UID in record. The object might have been deleted and then recreated`},
		{name: "missing pod", account: "builder", req: authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{BoundObjectRef: podRef("ghost", "")}},
			code: 404, message: `pods "ghost" not found`},
		{name: "unsupported kind", account: "builder", req: authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{
			BoundObjectRef: &authenticationv1.BoundObjectReference{Kind: "ConfigMap", APIVersion: "v1", Name: "x"}}},
			code: 400, message: `cannot bind token to object of type /v1, Kind=ConfigMap`},
		{name: "name mismatch", account: "builder", req: authenticationv1.TokenRequest{ObjectMeta: metav1.ObjectMeta{Name: "other"}},
			code: 422, message: `TokenRequest.authentication.k8s.io "builder" is invalid: metadata.name: Invalid value: "other": must match the service account name if specified`},
		{name: "namespace mismatch", account: "builder", req: authenticationv1.TokenRequest{ObjectMeta: metav1.ObjectMeta{Namespace: "default"}},
			code: 400, message: `the namespace of the provided object does not match the namespace sent on the request`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := s.client.CoreV1().ServiceAccounts("team").CreateToken(ctx, tt.account, &tt.req, metav1.CreateOptions{})
			if statusCode(err) != tt.code || err.Error() != tt.message {
				t.Errorf("got %d %v\nwant %d %s", statusCode(err), err, tt.code, tt.message)
			}
		})
	}
}

// testOIDCDiscovery: the discovery documents as kube-apiserver serves
// them (for authenticated users), and the key set verifies the tokens.
func testOIDCDiscovery(t *testing.T, s *saServer) {
	httpClient, err := rest.HTTPClientFor(s.admin)
	if err != nil {
		t.Fatal(err)
	}
	get := func(path string) (*http.Response, []byte) {
		t.Helper()
		resp, err := httpClient.Get(s.r.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp, body
	}
	resp, body := get("/.well-known/openid-configuration")
	want := `{"issuer":"https://kubernetes.default.svc.cluster.local","jwks_uri":"` + s.r.URL +
		`/openid/v1/jwks","response_types_supported":["id_token"],"subject_types_supported":["public"],"id_token_signing_alg_values_supported":["RS256"]}`
	if resp.StatusCode != 200 || string(body) != want {
		t.Errorf("openid-configuration: %d %s\nwant %s", resp.StatusCode, body, want)
	}
	if ct, cc := resp.Header.Get("Content-Type"), resp.Header.Get("Cache-Control"); ct != "application/json" || cc != "public, max-age=3600" {
		t.Errorf("openid-configuration: Content-Type %q, Cache-Control %q", ct, cc)
	}
	resp, body = get("/openid/v1/jwks")
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != 200 || ct != "application/jwk-set+json" {
		t.Fatalf("jwks: %d, Content-Type %q", resp.StatusCode, ct)
	}
	var keys jose.JSONWebKeySet
	if err := json.Unmarshal(body, &keys); err != nil || len(keys.Keys) != 1 {
		t.Fatalf("jwks %s: %v", body, err)
	}
	if k := keys.Keys[0]; k.Algorithm != "RS256" || k.Use != "sig" || k.KeyID == "" {
		t.Errorf("jwk: alg %q use %q kid %q, want RS256, sig and a key ID", k.Algorithm, k.Use, k.KeyID)
	}
	tok := s.token(t, "team", "builder", authenticationv1.TokenRequestSpec{Audiences: []string{"vault"}})
	parsed, err := jwt.ParseSigned(tok)
	if err != nil {
		t.Fatal(err)
	}
	var claims jwt.Claims
	if err := parsed.Claims(keys.Keys[0].Key, &claims); err != nil {
		t.Fatalf("the JWKS does not verify a token: %v", err)
	}
	if claims.Subject != "system:serviceaccount:team:builder" || claims.Issuer != satoken.DefaultIssuer || !claims.Audience.Contains("vault") {
		t.Errorf("claims sub %q iss %q aud %v", claims.Subject, claims.Issuer, claims.Audience)
	}
	// A token for another audience does not authenticate to the API.
	if got := s.statusOf(tok, "team"); got != http.StatusUnauthorized {
		t.Errorf("token for audience vault: %d, want 401", got)
	}
	anon, err := http.NewRequest(http.MethodGet, s.r.URL+"/openid/v1/jwks", nil)
	if err != nil {
		t.Fatal(err)
	}
	plain, err := rest.HTTPClientFor(rest.AnonymousClientConfig(s.admin))
	if err != nil {
		t.Fatal(err)
	}
	// RBAC's system:service-account-issuer-discovery is bound to
	// system:serviceaccounts only, as on kube-apiserver.
	if code := statusOfRequest(t, plain, anon); code != http.StatusForbidden {
		t.Errorf("anonymous jwks: %d, want 403", code)
	}
	// A service account reads them, by that role.
	s.createSA(t, "team", "oidc-reader")
	saReq, err := http.NewRequest(http.MethodGet, s.r.URL+"/.well-known/openid-configuration", nil)
	if err != nil {
		t.Fatal(err)
	}
	saReq.Header.Set("Authorization", "Bearer "+s.token(t, "team", "oidc-reader", authenticationv1.TokenRequestSpec{}))
	if code := statusOfRequest(t, plain, saReq); code != http.StatusOK {
		t.Errorf("a service account reading the discovery document: %d, want 200", code)
	}
}

// statusOfRequest sends req and returns the response's status code.
func statusOfRequest(t *testing.T, c *http.Client, req *http.Request) int {
	t.Helper()
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// syncBuffer is a log sink the server writes from its goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
