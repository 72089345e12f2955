package servers

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"k8s.io/client-go/rest"

	"github.com/stratadev/strata/bench/internal/proc"
)

// kubePackage is the kube-apiserver command of the k8s.io/kubernetes
// version strata depends on (go.mod's tool directive keeps its modules in
// go.sum).
const (
	kubeModule  = "k8s.io/kubernetes"
	kubePackage = kubeModule + "/cmd/kube-apiserver"
)

// KubeAPIServer returns the kube-apiserver binary to run: prebuilt when
// given, else built from this module (proc.GoBinary).
func KubeAPIServer(ctx context.Context, prebuilt string, progress io.Writer) (string, error) {
	return proc.GoBinary(ctx, prebuilt, kubePackage, "kube-apiserver-"+KubeVersion(), "-kube-apiserver", progress)
}

// KubeVersion is the k8s.io/kubernetes version this program was built
// with ("unknown" without build information).
func KubeVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, m := range bi.Deps {
			if m.Path == kubeModule {
				return m.Version
			}
		}
	}
	return "unknown"
}

// Kube is a started kube-apiserver.
type Kube struct {
	Proc   *proc.Process
	Config *rest.Config
}

// StartKubeAPIServer starts bin on etcd with a serving certificate and
// service-account key of its own in dir, and waits for /readyz.
func StartKubeAPIServer(ctx context.Context, bin, dir string, etcd []string, tokens string) (*Kube, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("servers: kube-apiserver directory: %w", err)
	}
	certPEM, err := writeKubeKeys(dir)
	if err != nil {
		return nil, err
	}
	port, err := proc.FreePort()
	if err != nil {
		return nil, err
	}
	args := kubeArgs(dir, etcd, tokens, port)
	p, err := proc.Start("kube-apiserver", bin, args, nil, filepath.Join(dir, "kube-apiserver.log"))
	if err != nil {
		return nil, err
	}
	p.DiscardStdout()
	rc := &rest.Config{Host: "https://127.0.0.1:" + strconv.Itoa(port), BearerToken: AdminToken,
		TLSClientConfig: rest.TLSClientConfig{CAData: certPEM}}
	if err := proc.WaitReady(ctx, p, rc); err != nil {
		return nil, errors.Join(err, p.Stop())
	}
	return &Kube{Proc: p, Config: rc}, nil
}

// kubeArgs are kube-apiserver's flags: served on loopback only, RBAC as
// strata's default, the token file, no compaction in the middle of a cell
// (strata's bench setting), everything else its defaults. The advertised
// address (only written into the kubernetes Endpoints) is left to its
// default, the host's address, as strata's is: kube-apiserver refuses a
// loopback one.
func kubeArgs(dir string, etcd []string, tokens string, port int) []string {
	return []string{
		"--etcd-servers=" + strings.Join(etcd, ","),
		"--etcd-compaction-interval=0",
		"--bind-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(port),
		"--cert-dir=" + dir,
		"--tls-cert-file=" + filepath.Join(dir, "serving.crt"),
		"--tls-private-key-file=" + filepath.Join(dir, "serving.key"),
		"--token-auth-file=" + tokens,
		"--authorization-mode=RBAC",
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + filepath.Join(dir, "sa.key"),
		"--service-account-signing-key-file=" + filepath.Join(dir, "sa.key"),
		"--service-cluster-ip-range=10.96.0.0/12",
	}
}

// writeKubeKeys writes a self-signed serving certificate for 127.0.0.1
// and a service-account signing key into dir; it returns the certificate.
func writeKubeKeys(dir string) ([]byte, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("servers: serving key: %w", err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "kube-apiserver"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, BasicConstraintsValid: true, IsCA: true,
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, DNSNames: []string{"localhost"}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, fmt.Errorf("servers: serving certificate: %w", err)
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	saKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("servers: service-account key: %w", err)
	}
	for name, data := range map[string][]byte{"serving.crt": certPEM, "serving.key": ecKeyPEM(key), "sa.key": ecKeyPEM(saKey)} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			return nil, fmt.Errorf("servers: writing %s: %w", name, err)
		}
	}
	return certPEM, nil
}

func ecKeyPEM(k *ecdsa.PrivateKey) []byte {
	der, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		panic(err) // a P-256 key always marshals
	}
	return pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der})
}
