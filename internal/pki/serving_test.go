package pki

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/x509"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var testHosts = []string{"127.0.0.1", "localhost", "10.1.2.3", "::1", "strata.example"}

func readFile(t *testing.T, file string) []byte {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func mode(t *testing.T, file string) os.FileMode {
	t.Helper()
	info, err := os.Stat(file)
	if err != nil {
		t.Fatal(err)
	}
	return info.Mode().Perm()
}

func TestEnsureServingVerifiesEachHost(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	s, err := EnsureServing(dir, testHosts)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(s.CAPEM, readFile(t, s.CAFile)) {
		t.Error("CAPEM differs from the contents of CAFile")
	}
	ca, _, err := readCert(s.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	if ca.Subject.CommonName != "strata-ca" || !ca.IsCA {
		t.Errorf("CA subject %q IsCA=%v, want strata-ca and a CA", ca.Subject.CommonName, ca.IsCA)
	}
	if pub, ok := ca.PublicKey.(*ecdsa.PublicKey); !ok || pub.Curve != elliptic.P256() {
		t.Errorf("CA key is %T, want ECDSA P-256", ca.PublicKey)
	}
	if years := ca.NotAfter.Sub(time.Now()).Hours() / 24 / 365; years < 9.9 {
		t.Errorf("CA valid for %.1f more years, want 10", years)
	}
	cert, _, err := readCert(s.CertFile)
	if err != nil {
		t.Fatal(err)
	}
	if days := cert.NotAfter.Sub(time.Now()).Hours() / 24; days < 364 {
		t.Errorf("serving certificate valid for %.0f more days, want a year", days)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(s.CAPEM)
	for _, h := range testHosts {
		opts := x509.VerifyOptions{Roots: roots, DNSName: h, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
		if _, err := cert.Verify(opts); err != nil {
			t.Errorf("host %s: %v", h, err)
		}
	}
	if _, err := cert.Verify(x509.VerifyOptions{Roots: roots, DNSName: "other.example"}); err == nil {
		t.Error("certificate verifies for a host that was not asked for")
	}
	for _, f := range []string{s.KeyFile, filepath.Join(dir, caKeyName)} {
		if m := mode(t, f); m != 0o600 {
			t.Errorf("%s has mode %o, want 600", filepath.Base(f), m)
		}
	}
	if m := mode(t, dir); m != 0o700 {
		t.Errorf("data directory has mode %o, want 700", m)
	}
}

// snapshot returns the contents of the four credential files (nil for a
// missing one).
func snapshot(dir string) map[string][]byte {
	files := map[string][]byte{}
	for _, name := range []string{caCertName, caKeyName, servingCertName, servingKeyName} {
		files[name], _ = os.ReadFile(filepath.Join(dir, name))
	}
	return files
}

func TestEnsureServingRestart(t *testing.T) {
	start := time.Now()
	tests := []struct {
		name     string
		hosts    []string
		now      time.Time
		prepare  func(t *testing.T, dir string)
		reissued bool
	}{
		{name: "same hosts", hosts: testHosts, now: start},
		{name: "fewer hosts", hosts: testHosts[:2], now: start},
		{name: "hosts in another order", hosts: []string{"strata.example", "::1", "localhost", "127.0.0.1"}, now: start},
		{name: "31 days left", hosts: testHosts, now: start.Add(334 * 24 * time.Hour)},
		{name: "new IP", hosts: append(testHosts[:len(testHosts):len(testHosts)], "192.168.7.7"), now: start, reissued: true},
		{name: "new name", hosts: append(testHosts[:len(testHosts):len(testHosts)], "api.strata.example"), now: start, reissued: true},
		{name: "29 days left", hosts: testHosts, now: start.Add(336 * 24 * time.Hour), reissued: true},
		{name: "serving key lost", hosts: testHosts, now: start, reissued: true, prepare: func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, servingKeyName))
		}},
		{name: "serving key of another pair", hosts: testHosts, now: start, reissued: true, prepare: func(t *testing.T, dir string) {
			other := t.TempDir()
			if _, err := EnsureServing(other, testHosts); err != nil {
				t.Fatal(err)
			}
			os.WriteFile(filepath.Join(dir, servingKeyName), readFile(t, filepath.Join(other, servingKeyName)), 0o600)
		}},
		{name: "serving pair from another CA", hosts: testHosts, now: start, reissued: true, prepare: func(t *testing.T, dir string) {
			other := t.TempDir()
			if _, err := EnsureServing(other, testHosts); err != nil {
				t.Fatal(err)
			}
			for _, name := range []string{servingCertName, servingKeyName} {
				os.WriteFile(filepath.Join(dir, name), readFile(t, filepath.Join(other, name)), 0o600)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if _, err := ensureServing(dir, testHosts, start); err != nil {
				t.Fatal(err)
			}
			if tt.prepare != nil {
				tt.prepare(t, dir)
			}
			before := snapshot(dir)
			s, err := ensureServing(dir, tt.hosts, tt.now)
			if err != nil {
				t.Fatal(err)
			}
			after := snapshot(dir)
			for _, name := range []string{caCertName, caKeyName} {
				if !bytes.Equal(before[name], after[name]) {
					t.Errorf("%s changed", name)
				}
			}
			changed := !bytes.Equal(before[servingCertName], after[servingCertName])
			if changed != tt.reissued {
				t.Errorf("serving certificate reissued = %v, want %v", changed, tt.reissued)
			}
			if !tt.reissued && !bytes.Equal(before[servingKeyName], after[servingKeyName]) {
				t.Error("serving key changed although the certificate was kept")
			}
			ca, err := loadOrCreateCA(dir, tt.now)
			if err != nil {
				t.Fatal(err)
			}
			if ok, err := servingUsable(s, ca, tt.hosts, tt.now); !ok || err != nil {
				t.Errorf("serving pair after the restart is not usable for %v: %v", tt.hosts, err)
			}
		})
	}
}

func TestEnsureServingErrors(t *testing.T) {
	tests := []struct {
		name    string
		hosts   []string
		prepare func(t *testing.T, dir string)
		want    string
	}{
		{name: "host with port", hosts: []string{"localhost:6443"}, want: `host "localhost:6443"`},
		{name: "URL", hosts: []string{"https://strata.example"}, want: `host "https://strata.example"`},
		{name: "empty host", hosts: []string{""}, want: `host ""`},
		{name: "CA key lost", hosts: testHosts, want: "ca.key", prepare: func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, caKeyName))
		}},
		{name: "CA key of another CA", hosts: testHosts, want: "does not match", prepare: func(t *testing.T, dir string) {
			other := t.TempDir()
			if _, err := EnsureServing(other, testHosts); err != nil {
				t.Fatal(err)
			}
			os.WriteFile(filepath.Join(dir, caKeyName), readFile(t, filepath.Join(other, caKeyName)), 0o600)
		}},
		{name: "CA file is the serving certificate", hosts: testHosts, want: "not a CA", prepare: func(t *testing.T, dir string) {
			for _, n := range [][2]string{{servingCertName, caCertName}, {servingKeyName, caKeyName}} {
				os.WriteFile(filepath.Join(dir, n[1]), readFile(t, filepath.Join(dir, n[0])), 0o600)
			}
		}},
		{name: "CA file is not PEM", hosts: testHosts, want: "no PEM CERTIFICATE", prepare: func(t *testing.T, dir string) {
			os.WriteFile(filepath.Join(dir, caCertName), []byte("garbage"), 0o644)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if tt.prepare != nil {
				if _, err := EnsureServing(dir, testHosts); err != nil {
					t.Fatal(err)
				}
				tt.prepare(t, dir)
			}
			_, err := EnsureServing(dir, tt.hosts)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want one containing %q", err, tt.want)
			}
		})
	}
}

func TestEnsureServingExpiredCA(t *testing.T) {
	dir := t.TempDir()
	if _, err := EnsureServing(dir, testHosts); err != nil {
		t.Fatal(err)
	}
	_, err := ensureServing(dir, testHosts, time.Now().Add(11*365*24*time.Hour))
	if err == nil || !strings.Contains(err.Error(), "CA expired") {
		t.Fatalf("error %v, want CA expired", err)
	}
}
