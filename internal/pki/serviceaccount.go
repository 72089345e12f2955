package pki

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"

	"github.com/stratadev/strata/internal/atomicfile"
)

const (
	saKeyName = "sa.key"
	saPubName = "sa.pub"
	// saKeyBits: RSA rather than ECDSA because relying parties of the OIDC
	// discovery documents (cloud identity federation) often accept only
	// RS256; 2048 bits as kubeadm's sa.key.
	saKeyBits = 2048
)

// ServiceAccountKeyFile is where EnsureServiceAccountKey keeps the key that
// signs service-account tokens in dir.
func ServiceAccountKeyFile(dir string) string { return filepath.Join(dir, saKeyName) }

// EnsureServiceAccountKey returns the private key that signs
// service-account tokens, kept in dir/sa.key (PKCS#8, mode 0600) with its
// public half in dir/sa.pub (for relying parties), making them (RSA 2048)
// on the first call. Tokens signed before a restart stay valid because the
// key does; removing sa.key invalidates every token issued so far.
func EnsureServiceAccountKey(dir string) (crypto.Signer, error) {
	file := ServiceAccountKeyFile(dir)
	ok, err := exists(file)
	if err != nil {
		return nil, err
	}
	if ok {
		key, err := readKey(file)
		if err != nil {
			return nil, fmt.Errorf("service-account signing key: %w", err)
		}
		if err := checkTokenKey(file, key); err != nil {
			return nil, err
		}
		return key, nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("creating data directory: %w", err)
	}
	key, err := rsa.GenerateKey(rand.Reader, saKeyBits)
	if err != nil {
		return nil, fmt.Errorf("generating service-account signing key: %w", err)
	}
	keyPEM, err := encodeKey(key)
	if err != nil {
		return nil, err
	}
	pubDER, err := x509.MarshalPKIXPublicKey(key.Public())
	if err != nil {
		return nil, fmt.Errorf("encoding service-account public key: %w", err)
	}
	// The public key first: sa.key's presence means the pair is complete.
	pubPEM := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pubDER})
	if err := atomicfile.Write(filepath.Join(dir, saPubName), pubPEM, 0o644); err != nil {
		return nil, err
	}
	if err := atomicfile.Write(file, keyPEM, 0o600); err != nil {
		return nil, err
	}
	return key, nil
}

// checkTokenKey refuses keys upstream's JWT signer cannot use.
func checkTokenKey(file string, key crypto.Signer) error {
	switch key.(type) {
	case *rsa.PrivateKey, *ecdsa.PrivateKey:
		return nil
	}
	return fmt.Errorf("%s: a %T cannot sign service-account tokens (want an RSA or ECDSA key)", file, key)
}
