package satoken

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/authentication/user"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/warning"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	authenticationapi "k8s.io/kubernetes/pkg/apis/authentication"

	"github.com/stratadev/strata/apiserver/authn"
)

func newTestIssuer(t *testing.T, cfg Config) *Issuer {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Issuers == nil {
		cfg.Issuers = []string{DefaultIssuer}
	}
	cfg.SigningKey = key
	i, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return i
}

type recorder struct{ texts []string }

func (r *recorder) AddWarning(_, text string) { r.texts = append(r.texts, text) }

// TestAuthenticatedUser: a pod-bound token from TokenREST authenticates as
// the account, with kube-apiserver's groups and extra, and the strata
// authenticator (TokenReviews, requests) adds system:authenticated.
func TestAuthenticatedUser(t *testing.T) {
	client := fake.NewClientset(
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "robot", Namespace: "team", UID: "sa-uid"}},
		&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "job", Namespace: "team", UID: "pod-uid"},
			Spec: corev1.PodSpec{ServiceAccountName: "robot", NodeName: "node-1"}},
		&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1", UID: "node-uid"}},
	)
	i := newTestIssuer(t, Config{MaxExpiration: time.Hour})
	tokens, err := i.TokenREST(client, nil)
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	ctx := warning.WithWarningRecorder(genericapirequest.WithNamespace(context.Background(), "team"), rec)
	out, err := tokens.Create(ctx, "robot", &authenticationapi.TokenRequest{Spec: authenticationapi.TokenRequestSpec{
		ExpirationSeconds: 7200,
		BoundObjectRef:    &authenticationapi.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: "job"},
	}}, nil, &metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tr := out.(*authenticationapi.TokenRequest)
	if tr.Spec.ExpirationSeconds != 3600 || !cmp.Equal(rec.texts, []string{"requested expiration of 7200 seconds shortened to 3600 seconds"}) {
		t.Errorf("expiration %d, warnings %q; want 3600 and the shortening warned", tr.Spec.ExpirationSeconds, rec.texts)
	}

	shared := informers.NewSharedInformerFactory(client, 0)
	tokenAuth := i.Authenticator(client, shared)
	stop := make(chan struct{})
	defer close(stop)
	shared.Start(stop)
	shared.WaitForCacheSync(stop)
	a := &authn.Authenticator{More: tokenAuth}
	resp, ok, err := a.AuthenticateToken(context.Background(), tr.Status.Token)
	if !ok || err != nil {
		t.Fatalf("token refused: %v", err)
	}
	u := resp.User
	credential := u.GetExtra()["authentication.kubernetes.io/credential-id"]
	if len(credential) != 1 || !strings.HasPrefix(credential[0], "JTI=") {
		t.Errorf("credential-id %q, want one JTI=...", credential)
	}
	want := &user.DefaultInfo{Name: "system:serviceaccount:team:robot", UID: "sa-uid",
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:team", "system:authenticated"},
		Extra: map[string][]string{
			"authentication.kubernetes.io/credential-id": credential,
			"authentication.kubernetes.io/node-name":     {"node-1"},
			"authentication.kubernetes.io/node-uid":      {"node-uid"},
			"authentication.kubernetes.io/pod-name":      {"job"},
			"authentication.kubernetes.io/pod-uid":       {"pod-uid"},
		}}
	got := &user.DefaultInfo{Name: u.GetName(), UID: u.GetUID(), Groups: u.GetGroups(), Extra: u.GetExtra()}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("user (-want +got):\n%s", diff)
	}
}

// TestConfigRefused: kube-apiserver's checks of the service-account flags.
func TestConfigRefused(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		want string
	}{
		{name: "no issuer", cfg: Config{Issuers: []string{}}, want: "service-account-issuer is a required flag"},
		{name: "empty issuer", cfg: Config{Issuers: []string{""}}, want: "service-account-issuer should not be an empty string"},
		{name: "twice", cfg: Config{Issuers: []string{"a", "a"}}, want: `service-account-issuer "a" is already specified`},
		{name: "short maximum", cfg: Config{MaxExpiration: 59 * time.Minute},
			want: "the service-account-max-token-expiration must be between 1 hour and 2^32 seconds"},
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.cfg.Issuers == nil {
				tt.cfg.Issuers = []string{DefaultIssuer}
			}
			tt.cfg.SigningKey = key
			if _, err := New(tt.cfg); err == nil || err.Error() != tt.want {
				t.Errorf("error %v, want %q", err, tt.want)
			}
		})
	}
}

// TestDiscoveryNeedsHTTPSIssuer: as kube-apiserver, an issuer that is not an
// https URL has no discovery documents.
func TestDiscoveryNeedsHTTPSIssuer(t *testing.T) {
	i := newTestIssuer(t, Config{Issuers: []string{"api"}})
	if _, err := i.DiscoveryHandler("127.0.0.1:6443"); err == nil || err.Error() != "issuer URL must use https scheme, got: api" {
		t.Errorf("error %v, want the https refusal", err)
	}
}
