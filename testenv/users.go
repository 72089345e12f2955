package testenv

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"time"

	"k8s.io/client-go/rest"
)

// certLifetime is how long the client CA and the users' certificates are
// valid: longer than any test.
const certLifetime = 24 * time.Hour

// authority is a CA of a test's: one signs the client certificates of the
// users AddUser adds, which the server trusts (--client-ca-file) as
// envtest's API server trusts the CA of its users; another the serving
// certificate of the test's webhook server.
type authority struct {
	cert   *x509.Certificate
	key    crypto.Signer
	caFile string
	caPEM  []byte
}

func newClientCA(dir string) (*authority, error) { return newCA(dir, "client-ca") }

// newCA makes a CA and writes its certificate to dir/name.crt.
func newCA(dir, name string) (*authority, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("%s key: %w", name, err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "strata-testenv-" + name},
		NotBefore: now.Add(-time.Minute), NotAfter: now.Add(certLifetime), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, fmt.Errorf("%s certificate: %w", name, err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("%s certificate: %w", name, err)
	}
	file := filepath.Join(dir, name+".crt")
	if err := os.WriteFile(file, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return &authority{cert: cert, key: key, caFile: file,
		caPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}, nil
}

// issue returns a client certificate and its key, PEM-encoded, for the
// user name in groups: the API server reads the name from the Common
// Name and the groups from the Organizations, as kube-apiserver does.
func (ca *authority) issue(name string, groups []string) (certPEM, keyPEM []byte, err error) {
	tmpl := &x509.Certificate{Subject: pkix.Name{CommonName: name, Organization: groups},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	certPEM, keyPEM, err = ca.sign(tmpl)
	if err != nil {
		return nil, nil, fmt.Errorf("certificate of user %q: %w", name, err)
	}
	return certPEM, keyPEM, nil
}

// sign completes tmpl (serial number, validity, key usage) and signs it
// with a new key, returning both PEM-encoded.
func (ca *authority) sign(tmpl *x509.Certificate) (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	if tmpl.SerialNumber, err = rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 126)); err != nil {
		return nil, nil, err
	}
	now := time.Now()
	tmpl.NotBefore, tmpl.NotAfter = now.Add(-time.Minute), now.Add(certLifetime)
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, key.Public(), ca.key)
	if err != nil {
		return nil, nil, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), nil
}

// AddUser returns a client configuration that authenticates as the user
// name, a member of groups, by a client certificate of its own; what the
// user may do is up to the server's authorization (RBAC), as for any
// user. Like envtest's AddUser, it adds no role: bind one to the user or
// a group. A name must not be empty. It fails the test on an error, so
// call it from the test's goroutine.
func (e *Env) AddUser(name string, groups ...string) *rest.Config {
	e.t.Helper()
	if name == "" {
		e.t.Fatal("testenv: AddUser: the user's name is empty (the server would not authenticate its certificate)")
	}
	certPEM, keyPEM, err := e.users.issue(name, groups)
	if err != nil {
		e.t.Fatalf("testenv: AddUser: %v", err)
	}
	cfg := rest.AnonymousClientConfig(e.Config)
	cfg.CertData, cfg.KeyData = certPEM, keyPEM
	return cfg
}

// writeServiceAccountKey writes the key that signs the server's
// service-account tokens: ECDSA (ES256, which kube-apiserver accepts too).
// strata server's default, an RSA key made at the first start, costs a
// large share of a fresh test server's start; an ECDSA key is cheap.
func writeServiceAccountKey(dir string) (string, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return "", fmt.Errorf("service-account key: %w", err)
	}
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return "", fmt.Errorf("service-account key: %w", err)
	}
	file := filepath.Join(dir, "sa.key")
	if err := os.WriteFile(file, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}), 0o600); err != nil {
		return "", fmt.Errorf("service-account key: %w", err)
	}
	return file, nil
}
