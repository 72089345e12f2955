package pki

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/stratadev/strata/internal/atomicfile"
)

const (
	servingCertName = "server.crt"
	servingKeyName  = "server.key"
	servingName     = "strata"
	servingValidity = 365 * 24 * time.Hour

	// renewBefore is how close to its expiry a serving certificate is
	// replaced at start-up.
	renewBefore = 30 * 24 * time.Hour
)

// Serving names the files of a server's TLS credentials.
type Serving struct {
	CAFile   string // PEM certificate of the CA that signed CertFile
	CertFile string // PEM serving certificate
	KeyFile  string // PEM private key of CertFile (mode 0600)
	CAPEM    []byte // contents of CAFile, for kubeconfigs and client pools
}

// EnsureServing makes dir hold a CA and a serving certificate valid for
// every host (IP addresses become IP SANs, anything else a DNS SAN). The CA
// is created once and kept; the serving certificate is kept while it was
// signed by that CA, covers every host and has more than 30 days left, and
// is issued anew otherwise.
func EnsureServing(dir string, hosts []string) (Serving, error) {
	return ensureServing(dir, hosts, time.Now())
}

func ensureServing(dir string, hosts []string, now time.Time) (Serving, error) {
	ips, names, err := splitHosts(hosts)
	if err != nil {
		return Serving{}, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return Serving{}, fmt.Errorf("creating data directory: %w", err)
	}
	ca, err := loadOrCreateCA(dir, now)
	if err != nil {
		return Serving{}, err
	}
	s := Serving{
		CAFile:   filepath.Join(dir, caCertName),
		CertFile: filepath.Join(dir, servingCertName),
		KeyFile:  filepath.Join(dir, servingKeyName),
		CAPEM:    ca.pem,
	}
	ok, err := servingUsable(s, ca, hosts, now)
	if err != nil {
		return Serving{}, err
	}
	if !ok {
		if err := issueServing(s, ca, ips, names, now); err != nil {
			return Serving{}, err
		}
	}
	return s, nil
}

// splitHosts sorts hosts into IP and DNS SANs and rejects what is neither.
func splitHosts(hosts []string) ([]net.IP, []string, error) {
	var ips []net.IP
	var names []string
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			ips = append(ips, ip)
			continue
		}
		if h == "" || strings.ContainsAny(h, ":/ \t\n") {
			return nil, nil, fmt.Errorf("serving certificate host %q: not an IP address or DNS name (no ports or URLs)", h)
		}
		names = append(names, h)
	}
	return ips, names, nil
}

// servingUsable reports whether the existing serving pair can be kept.
// Missing, mismatched or unreadable files are reasons to reissue, not
// errors: the CA, not the serving pair, is what clients trust.
func servingUsable(s Serving, ca *authority, hosts []string, now time.Time) (bool, error) {
	ok, err := exists(s.CertFile)
	if err != nil || !ok {
		return false, err
	}
	cert, _, err := readCert(s.CertFile)
	if err != nil {
		return false, nil
	}
	key, err := readKey(s.KeyFile)
	if err != nil || !keyMatches(cert, key) {
		return false, nil
	}
	if now.Add(renewBefore).After(cert.NotAfter) {
		return false, nil
	}
	roots := x509.NewCertPool()
	roots.AddCert(ca.cert)
	opts := x509.VerifyOptions{Roots: roots, CurrentTime: now, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	if _, err := cert.Verify(opts); err != nil {
		return false, nil
	}
	for _, h := range hosts {
		if cert.VerifyHostname(h) != nil {
			return false, nil
		}
	}
	return true, nil
}

// issueServing signs a new serving key pair with ca and writes it, the key
// first: a crash between the two renames leaves a key that does not match
// the old certificate, which the next start replaces.
func issueServing(s Serving, ca *authority, ips []net.IP, names []string, now time.Time) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return fmt.Errorf("generating serving key: %w", err)
	}
	serial, err := randomSerial()
	if err != nil {
		return err
	}
	notAfter := now.Add(servingValidity)
	if notAfter.After(ca.cert.NotAfter) {
		notAfter = ca.cert.NotAfter
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: servingName},
		NotBefore:             now.Add(-clockSkew),
		NotAfter:              notAfter,
		KeyUsage:              x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IPAddresses:           ips,
		DNSNames:              names,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, key.Public(), ca.key)
	if err != nil {
		return fmt.Errorf("creating serving certificate: %w", err)
	}
	keyPEM, err := encodeKey(key)
	if err != nil {
		return err
	}
	if err := atomicfile.Write(s.KeyFile, keyPEM, 0o600); err != nil {
		return err
	}
	return atomicfile.Write(s.CertFile, encodeCert(der), 0o644)
}
