package authn

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/endpoints/request"
)

// testCA signs client certificates for the tests.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
}

func newTestCA(t *testing.T, name string) *testCA {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true, IsCA: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	return &testCA{cert: cert, key: key}
}

func (ca *testCA) pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(ca.cert)
	return p
}

// client returns a TLS client certificate signed by ca.
func (ca *testCA) client(t *testing.T, cn string, orgs []string, usage x509.ExtKeyUsage) tls.Certificate {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: cn, Organization: orgs},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, key.Public(), ca.key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// whoami answers the user the middleware put in the context, and the
// Authorization header it left.
var whoami = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	u, ok := request.UserFrom(r.Context())
	if !ok {
		http.Error(w, "no user in context", http.StatusInternalServerError)
		return
	}
	fmt.Fprintf(w, "%s|%s|%s|%s", u.GetName(), u.GetUID(), strings.Join(u.GetGroups(), ","), r.Header.Get("Authorization"))
})

const wantUnauthorized = `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Unauthorized","reason":"Unauthorized","code":401}` + "\n"

func TestUnauthorizedBodyIsTheStatus(t *testing.T) {
	data, err := json.Marshal(metav1.Status{
		TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   metav1.StatusFailure, Message: "Unauthorized", Reason: metav1.StatusReasonUnauthorized, Code: 401,
	})
	if err != nil {
		t.Fatal(err)
	}
	if string(data)+"\n" != unauthorizedBody {
		t.Errorf("unauthorizedBody %q, want %q", unauthorizedBody, data)
	}
}

func TestMiddleware(t *testing.T) {
	ca, otherCA := newTestCA(t, "client-ca"), newTestCA(t, "other-ca")
	tokens := map[string]user.Info{
		"good-token": &user.DefaultInfo{Name: "alice", UID: "u1", Groups: []string{"dev"}},
		"ops-token":  &user.DefaultInfo{Name: "ops", UID: "u2", Groups: []string{"system:authenticated"}},
	}
	public := func(r *http.Request) bool { return r.URL.Path == "/healthz" }

	type server struct {
		url    string
		client func(cert *tls.Certificate) *http.Client
	}
	start := func(a *Authenticator) server {
		srv := httptest.NewUnstartedServer(Middleware(a, whoami))
		srv.TLS = &tls.Config{}
		ClientAuthTLS(srv.TLS, ca.pool())
		srv.StartTLS()
		t.Cleanup(srv.Close)
		return server{url: srv.URL, client: func(cert *tls.Certificate) *http.Client {
			c := srv.Client()
			tr := c.Transport.(*http.Transport).Clone()
			if cert != nil {
				// Sent whatever CAs the server names: Go's client would
				// otherwise keep back a certificate from another CA.
				tr.TLSClientConfig.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return cert, nil }
			}
			c.Transport = tr
			return c
		}}
	}
	strict := start(&Authenticator{Tokens: tokens, ClientCA: ca.pool()})
	anon := start(&Authenticator{Tokens: tokens, ClientCA: ca.pool(), Anonymous: public})
	noCA := start(&Authenticator{Tokens: tokens})

	// DER sorts the organizations: the groups come out ops, system:masters.
	fromCA := ca.client(t, "bob", []string{"system:masters", "ops"}, x509.ExtKeyUsageClientAuth)
	fromOther := otherCA.client(t, "mallory", []string{"system:masters"}, x509.ExtKeyUsageClientAuth)
	noCN := ca.client(t, "", []string{"system:masters"}, x509.ExtKeyUsageClientAuth)
	serverOnly := ca.client(t, "svc", nil, x509.ExtKeyUsageServerAuth)

	tests := []struct {
		name   string
		srv    server
		path   string
		auth   string
		cert   *tls.Certificate
		code   int
		whoami string // body on success: name|uid|groups|Authorization left
	}{
		{name: "no header", srv: strict, code: 401},
		{name: "wrong token", srv: strict, auth: "Bearer bad-token", code: 401},
		{name: "Bearer without token", srv: strict, auth: "Bearer", code: 401},
		{name: "Bearer and spaces", srv: strict, auth: "Bearer  good-token", code: 401},
		{name: "good token", srv: strict, auth: "Bearer good-token", code: 200, whoami: "alice|u1|dev,system:authenticated|"},
		{name: "scheme in lower case", srv: strict, auth: "bearer good-token", code: 200, whoami: "alice|u1|dev,system:authenticated|"},
		{name: "token already in system:authenticated", srv: strict, auth: "Bearer ops-token", code: 200, whoami: "ops|u2|system:authenticated|"},
		{name: "token as a prefix", srv: strict, auth: "Bearer good", code: 401},
		{name: "Basic auth", srv: strict, auth: "Basic YWxpY2U6Z29vZC10b2tlbg==", code: 401},
		{name: "client cert from the CA", srv: strict, cert: &fromCA, code: 200, whoami: "bob||ops,system:masters,system:authenticated|"},
		{name: "client cert from another CA", srv: strict, cert: &fromOther, code: 401},
		{name: "client cert from another CA and a good token", srv: strict, cert: &fromOther, auth: "Bearer good-token", code: 200, whoami: "alice|u1|dev,system:authenticated|"},
		{name: "client cert and a wrong token", srv: strict, cert: &fromCA, auth: "Bearer bad-token", code: 200, whoami: "bob||ops,system:masters,system:authenticated|Bearer bad-token"},
		{name: "client cert without common name", srv: strict, cert: &noCN, code: 401},
		{name: "server certificate as client cert", srv: strict, cert: &serverOnly, code: 401},
		{name: "client cert without a client CA", srv: noCA, cert: &fromCA, code: 401},
		{name: "anonymous: allowed path", srv: anon, path: "/healthz", code: 200, whoami: "system:anonymous||system:unauthenticated|"},
		{name: "anonymous: Basic auth counts as none", srv: anon, path: "/healthz", auth: "Basic YWxpY2U6Z29vZC10b2tlbg==", code: 200, whoami: "system:anonymous||system:unauthenticated|Basic YWxpY2U6Z29vZC10b2tlbg=="},
		{name: "anonymous: other path", srv: anon, path: "/api", code: 401},
		{name: "anonymous: wrong token", srv: anon, path: "/healthz", auth: "Bearer bad-token", code: 401},
		{name: "anonymous: cert from another CA", srv: anon, path: "/healthz", cert: &fromOther, code: 401},
		{name: "anonymous: good token", srv: anon, path: "/healthz", auth: "Bearer good-token", code: 200, whoami: "alice|u1|dev,system:authenticated|"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := tt.path
			if path == "" {
				path = "/api/v1/namespaces"
			}
			req, _ := http.NewRequest("GET", tt.srv.url+path, nil)
			if tt.auth != "" {
				req.Header.Set("Authorization", tt.auth)
			}
			resp, err := tt.srv.client(tt.cert).Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tt.code {
				t.Fatalf("status %d, want %d; body %s", resp.StatusCode, tt.code, body)
			}
			if tt.code == 401 {
				if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
					t.Errorf("Content-Type %q, want application/json", ct)
				}
				if string(body) != wantUnauthorized {
					t.Errorf("body %q\nwant %q", body, wantUnauthorized)
				}
				return
			}
			if string(body) != tt.whoami {
				t.Errorf("handler saw %q, want %q", body, tt.whoami)
			}
		})
	}
}

// TestMiddlewareDropsAuthorization checks that, as kube-apiserver's
// WithAuthentication, the Authorization header of a request its bearer
// token authenticated is gone from the request by the next handler, and
// that a request refused keeps it.
func TestMiddlewareDropsAuthorization(t *testing.T) {
	a := &Authenticator{Tokens: map[string]user.Info{"t": &user.DefaultInfo{Name: "n"}}}
	var seen []string
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = append(seen, r.Header.Get("Authorization"))
	})
	for _, tt := range []struct {
		token string
		code  int
		seen  []string
		after string
	}{
		{"t", 200, []string{""}, ""},
		{"nope", 401, nil, "Bearer nope"},
	} {
		seen = nil
		req := httptest.NewRequest("GET", "/api", nil)
		req.Header.Set("Authorization", "Bearer "+tt.token)
		rec := httptest.NewRecorder()
		Middleware(a, next).ServeHTTP(rec, req)
		if rec.Code != tt.code || !slices.Equal(seen, tt.seen) || req.Header.Get("Authorization") != tt.after {
			t.Errorf("token %q: %d, next handler saw %q, header after %q; want %d, %q, %q",
				tt.token, rec.Code, seen, req.Header.Get("Authorization"), tt.code, tt.seen, tt.after)
		}
	}
}

func TestClientAuthTLS(t *testing.T) {
	cfg := &tls.Config{}
	pool := x509.NewCertPool()
	ClientAuthTLS(cfg, pool)
	if cfg.ClientAuth != tls.RequestClientCert || cfg.ClientCAs != pool {
		t.Errorf("ClientAuth %v, ClientCAs set %v", cfg.ClientAuth, cfg.ClientCAs == pool)
	}
}
