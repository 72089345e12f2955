package pki

import (
	"crypto/x509"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/stratadev/strata/internal/atomicfile"
)

// Names inside the kubeconfig WriteKubeconfig writes.
const (
	KubeconfigCluster = "strata"
	KubeconfigUser    = "strata-admin"
	KubeconfigContext = "strata"
)

// WriteKubeconfig writes to path (mode 0600, through a temporary file and a
// rename) a kubeconfig whose current context "strata" reaches serverURL as
// user "strata-admin" with the bearer token. The CA certificate is inline,
// so the file keeps working when copied to another machine. caPEM may be
// empty: for an https server whose certificate the system roots verify, and
// for an http:// server (loopback plain HTTP), which takes no CA. Note that
// client-go sends no credentials at all, the token included, to an http://
// server: such a server cannot require authentication from kubectl.
func WriteKubeconfig(path, serverURL string, caPEM []byte, token string) error {
	if err := checkKubeconfigInputs(serverURL, caPEM, token); err != nil {
		return fmt.Errorf("kubeconfig %s: %w", path, err)
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[KubeconfigCluster] = &clientcmdapi.Cluster{Server: serverURL, CertificateAuthorityData: caPEM}
	cfg.AuthInfos[KubeconfigUser] = &clientcmdapi.AuthInfo{Token: token}
	cfg.Contexts[KubeconfigContext] = &clientcmdapi.Context{Cluster: KubeconfigCluster, AuthInfo: KubeconfigUser}
	cfg.CurrentContext = KubeconfigContext
	if err := clientcmd.Validate(*cfg); err != nil {
		return fmt.Errorf("kubeconfig %s: %w", path, err)
	}

	data, err := clientcmd.Write(*cfg)
	if err != nil {
		return fmt.Errorf("kubeconfig %s: %w", path, err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("writing kubeconfig %s: %w", path, err)
	}
	if err := atomicfile.Write(path, data, 0o600); err != nil {
		return fmt.Errorf("kubeconfig: %w", err)
	}
	return nil
}

func checkKubeconfigInputs(serverURL string, caPEM []byte, token string) error {
	u, err := url.Parse(serverURL)
	if err != nil {
		return fmt.Errorf("server URL: %w", err)
	}
	if (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return fmt.Errorf("server URL %q: want https://HOST[:PORT] (or http://)", serverURL)
	}
	switch {
	case len(caPEM) == 0:
	case u.Scheme == "http":
		return fmt.Errorf("server URL %q: CA data given for plain HTTP", serverURL)
	case !x509.NewCertPool().AppendCertsFromPEM(caPEM):
		return errors.New("CA data: no PEM certificate")
	}
	if token == "" {
		return errors.New("token is empty")
	}
	return nil
}
