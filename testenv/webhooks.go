package testenv

import (
	"context"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/stratadev/strata/internal/freeport"
)

// WebhookInstallOptions install admission webhook configurations against
// the test's own webhook server, as envtest's WebhookInstallOptions do:
// each webhook that names a service is made to call
// https://LocalServingHost:LocalServingPort at the service's path, every
// webhook trusts LocalServingCAData, and the test
// serves LocalServingCertDir's tls.crt and tls.key there (as
// controller-runtime's webhook server does, given that directory, host
// and port).
type WebhookInstallOptions struct {
	// MutatingWebhooks and ValidatingWebhooks are the configurations to
	// install; they are not changed (copies are).
	MutatingWebhooks   []*admissionregistrationv1.MutatingWebhookConfiguration
	ValidatingWebhooks []*admissionregistrationv1.ValidatingWebhookConfiguration
	// LocalServingHost is the address the webhooks are called at; default
	// 127.0.0.1. LocalServingPort is the port; 0 picks a free one.
	LocalServingHost string
	LocalServingPort int
	// Set by Start: the directory of the serving certificate (tls.crt,
	// tls.key, valid for LocalServingHost and localhost), and the CA that
	// signed it (PEM).
	LocalServingCertDir string
	LocalServingCAData  []byte
}

// Webhooks installs o's webhook configurations before Start returns, and
// fills in o's serving fields for the test's webhook server.
func Webhooks(o *WebhookInstallOptions) Option { return func(s *settings) { s.webhooks = o } }

// installWebhooks prepares the serving certificate and creates the
// configurations, pointed at the local server.
func (e *Env) installWebhooks(s *settings, dir string) error {
	o := s.webhooks
	if o == nil {
		return nil
	}
	if err := o.prepare(filepath.Join(dir, "webhook")); err != nil {
		return err
	}
	client, err := kubernetes.NewForConfig(e.Config)
	if err != nil {
		return fmt.Errorf("webhook client: %w", err)
	}
	ctx := context.Background()
	for _, c := range o.MutatingWebhooks {
		c = c.DeepCopy()
		for i := range c.Webhooks {
			o.point(&c.Webhooks[i].ClientConfig)
		}
		if _, err := client.AdmissionregistrationV1().MutatingWebhookConfigurations().Create(ctx, c, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("installing MutatingWebhookConfiguration %s: %w", c.Name, err)
		}
	}
	for _, c := range o.ValidatingWebhooks {
		c = c.DeepCopy()
		for i := range c.Webhooks {
			o.point(&c.Webhooks[i].ClientConfig)
		}
		if _, err := client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx, c, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("installing ValidatingWebhookConfiguration %s: %w", c.Name, err)
		}
	}
	return nil
}

// prepare chooses the port and writes the serving certificate into dir.
func (o *WebhookInstallOptions) prepare(dir string) error {
	if o.LocalServingHost == "" {
		o.LocalServingHost = "127.0.0.1"
	}
	if o.LocalServingPort == 0 {
		ports, err := freeport.Loopback(1)
		if err != nil {
			return fmt.Errorf("webhook server's port: %w", err)
		}
		o.LocalServingPort = ports[0]
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("webhook serving certificate: %w", err)
	}
	ca, err := newCA(dir, "webhook-ca")
	if err != nil {
		return err
	}
	tmpl := servingTemplate(o.LocalServingHost)
	certPEM, keyPEM, err := ca.sign(tmpl)
	if err != nil {
		return fmt.Errorf("webhook serving certificate: %w", err)
	}
	for name, data := range map[string][]byte{"tls.crt": certPEM, "tls.key": keyPEM} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			return fmt.Errorf("webhook serving certificate: %w", err)
		}
	}
	o.LocalServingCertDir, o.LocalServingCAData = dir, ca.caPEM
	return nil
}

// point makes a webhook that names a service call the local server
// instead, at the service's path (envtest's updateClientConfig, which
// leaves a service without a path alone, and writes the URL with two
// slashes), and makes every webhook trust the local CA. A URL is left as
// the test wrote it, as envtest leaves it.
func (o *WebhookInstallOptions) point(c *admissionregistrationv1.WebhookClientConfig) {
	c.CABundle = o.LocalServingCAData
	if c.Service == nil {
		return
	}
	path := "/"
	if c.Service.Path != nil {
		path = *c.Service.Path
	}
	u := (&url.URL{Scheme: "https", Host: net.JoinHostPort(o.LocalServingHost, strconv.Itoa(o.LocalServingPort)), Path: path}).String()
	c.URL, c.Service = &u, nil
}

// servingTemplate is the webhook server's certificate: for host (an IP
// address or a name) and localhost.
func servingTemplate(host string) *x509.Certificate {
	tmpl := &x509.Certificate{Subject: pkix.Name{CommonName: host}, DNSNames: []string{"localhost"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	if ip := net.ParseIP(host); ip != nil {
		tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
	} else {
		tmpl.DNSNames = append(tmpl.DNSNames, host)
	}
	return tmpl
}
