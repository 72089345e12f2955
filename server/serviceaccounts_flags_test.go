package server

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestServiceAccountFlags: the service-account flags are checked as
// kube-apiserver checks them, and key files that cannot be used are named.
func TestServiceAccountFlags(t *testing.T) {
	dir := t.TempDir()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, _ := x509.MarshalECPrivateKey(key)
	pubDER, _ := x509.MarshalPKIXPublicKey(key.Public())
	signing, public, junk := filepath.Join(dir, "signing.key"), filepath.Join(dir, "public.pem"), filepath.Join(dir, "junk")
	for file, data := range map[string][]byte{
		signing: pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}),
		public:  pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pubDER}),
		junk:    []byte("not a key"),
	} {
		if err := os.WriteFile(file, data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		name    string
		edit    func(*ServiceAccountOptions)
		wantErr string
	}{
		{name: "defaults", edit: func(*ServiceAccountOptions) {}},
		{name: "own keys and issuers", edit: func(o *ServiceAccountOptions) {
			o.SigningKeyFile, o.KeyFiles, o.Issuers = signing, []string{public}, []string{"https://a.example", "https://b.example"}
		}},
		{name: "maximum too short", edit: func(o *ServiceAccountOptions) { o.MaxTokenExpiration = 30 * time.Minute },
			wantErr: "the service-account-max-token-expiration must be between 1 hour and 2^32 seconds"},
		{name: "issuer twice", edit: func(o *ServiceAccountOptions) { o.Issuers = []string{"x", "x"} },
			wantErr: `service-account-issuer "x" is already specified`},
		{name: "signing key not a key", edit: func(o *ServiceAccountOptions) { o.SigningKeyFile = junk },
			wantErr: "--service-account-signing-key-file: failed to parse service-account-issuer-key-file: error reading private key file " +
				junk + ": data does not contain a valid RSA or ECDSA private key"},
		{name: "verifying keys missing", edit: func(o *ServiceAccountOptions) { o.KeyFiles = []string{filepath.Join(dir, "none")} },
			wantErr: "--service-account-key-file: open " + filepath.Join(dir, "none") + ": no such file or directory"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := NewOptions()
			o.DataDir = t.TempDir()
			tc.edit(&o.ServiceAccounts)
			err := o.Validate()
			if err == nil {
				_, err = newServiceAccounts(o)
			}
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Errorf("got %v, want %q", err, tc.wantErr)
			}
		})
	}
}
