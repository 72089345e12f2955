package pki

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestEnsureServiceAccountKey(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "pki")
	key, err := EnsureServiceAccountKey(dir)
	if err != nil {
		t.Fatal(err)
	}
	rsaKey, ok := key.(*rsa.PrivateKey)
	if !ok || rsaKey.N.BitLen() != 2048 {
		t.Fatalf("first start made a %T, want an RSA 2048 key", key)
	}
	if m := mode(t, filepath.Join(dir, "sa.key")); m != 0o600 {
		t.Errorf("sa.key has mode %o, want 600", m)
	}
	pubPEM, err := os.ReadFile(filepath.Join(dir, "sa.pub"))
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(pubPEM)
	if block == nil || block.Type != "PUBLIC KEY" {
		t.Fatalf("sa.pub is not a PEM PUBLIC KEY: %q", pubPEM)
	}
	pub, err := x509.ParsePKIXPublicKey(block.Bytes)
	if err != nil || !rsaKey.PublicKey.Equal(pub) {
		t.Errorf("sa.pub holds %v (%v), want the public half of sa.key", pub, err)
	}

	again, err := EnsureServiceAccountKey(dir)
	if err != nil || !rsaKey.Equal(again) {
		t.Errorf("restart: %v; reused the key: %v", err, rsaKey.Equal(again))
	}
}

func TestEnsureServiceAccountKeyBadFile(t *testing.T) {
	_, edKey, _ := ed25519.GenerateKey(rand.Reader)
	edPEM, err := encodeKey(edKey)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, content, want string
	}{
		{name: "not PEM", content: "garbage", want: "sa.key: no PEM block"},
		{name: "certificate", content: "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n",
			want: `sa.key: PEM block "CERTIFICATE" is not a private key`},
		{name: "corrupt key", content: "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n",
			want: "sa.key: parsing PRIVATE KEY"},
		{name: "ed25519", content: string(edPEM),
			want: "sa.key: a ed25519.PrivateKey cannot sign service-account tokens (want an RSA or ECDSA key)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "sa.key"), []byte(tt.content), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := EnsureServiceAccountKey(dir)
			if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, tt.want)) {
				t.Fatalf("error %v, want one containing %q", err, filepath.Join(dir, tt.want))
			}
			if _, statErr := os.Stat(filepath.Join(dir, "sa.pub")); statErr == nil {
				t.Errorf("a bad sa.key was replaced by a new pair")
			}
		})
	}
}
