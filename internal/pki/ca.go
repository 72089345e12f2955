package pki

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"math/big"
	"path/filepath"
	"time"

	"github.com/stratadev/strata/internal/atomicfile"
)

const (
	caCertName = "ca.crt"
	caKeyName  = "ca.key"
	caName     = "strata-ca"
	caValidity = 10 * 365 * 24 * time.Hour

	// clockSkew backdates NotBefore so a client whose clock runs a little
	// behind the server's accepts a certificate issued a moment ago.
	clockSkew = time.Hour
)

// authority is the CA that signs serving certificates.
type authority struct {
	cert *x509.Certificate
	key  crypto.Signer
	pem  []byte // ca.crt as written
}

// loadOrCreateCA reads dir/ca.crt and dir/ca.key, or makes them when ca.crt
// does not exist. ca.crt is written last: it is the file clients copy, so its
// presence means the pair is complete, and a ca.crt without its key is an
// error rather than a reason to replace a CA clients may already trust.
func loadOrCreateCA(dir string, now time.Time) (*authority, error) {
	certFile, keyFile := filepath.Join(dir, caCertName), filepath.Join(dir, caKeyName)
	ok, err := exists(certFile)
	if err != nil {
		return nil, err
	}
	if !ok {
		return createCA(certFile, keyFile, now)
	}
	cert, certPEM, err := readCert(certFile)
	if err != nil {
		return nil, err
	}
	key, err := readKey(keyFile)
	if err != nil {
		return nil, fmt.Errorf("%s exists but its key cannot be used (remove both to make a new CA): %w", certFile, err)
	}
	switch {
	case !keyMatches(cert, key):
		return nil, fmt.Errorf("%s: key does not match the public key of %s", keyFile, certFile)
	case !cert.IsCA || cert.KeyUsage&x509.KeyUsageCertSign == 0:
		return nil, fmt.Errorf("%s: certificate %q is not a CA that may sign certificates", certFile, cert.Subject.CommonName)
	case now.After(cert.NotAfter):
		return nil, fmt.Errorf("%s: CA expired at %s (remove %s and %s to make a new one)", certFile, cert.NotAfter.Format(time.RFC3339), caCertName, caKeyName)
	}
	return &authority{cert: cert, key: key, pem: certPEM}, nil
}

func createCA(certFile, keyFile string, now time.Time) (*authority, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generating CA key: %w", err)
	}
	serial, err := randomSerial()
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: caName},
		NotBefore:             now.Add(-clockSkew),
		NotAfter:              now.Add(caValidity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, fmt.Errorf("creating CA certificate: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("parsing new CA certificate: %w", err)
	}
	keyPEM, err := encodeKey(key)
	if err != nil {
		return nil, err
	}
	certPEM := encodeCert(der)
	if err := atomicfile.Write(keyFile, keyPEM, 0o600); err != nil {
		return nil, err
	}
	if err := atomicfile.Write(certFile, certPEM, 0o644); err != nil {
		return nil, err
	}
	return &authority{cert: cert, key: key, pem: certPEM}, nil
}

// randomSerial returns a random positive 128-bit serial number.
func randomSerial() (*big.Int, error) {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
	if err != nil {
		return nil, fmt.Errorf("generating serial number: %w", err)
	}
	return n.Add(n, big.NewInt(1)), nil
}
