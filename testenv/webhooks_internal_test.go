package testenv

import (
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
)

func TestWebhookPoint(t *testing.T) {
	path, other := "/validate", "https://elsewhere.example:443/hook"
	o := &WebhookInstallOptions{LocalServingHost: "127.0.0.1", LocalServingPort: 9443, LocalServingCAData: []byte("CA")}
	tests := []struct {
		name string
		in   admissionregistrationv1.WebhookClientConfig
		url  string
	}{
		{"service with a path", admissionregistrationv1.WebhookClientConfig{Service: &admissionregistrationv1.ServiceReference{Name: "s", Path: &path}}, "https://127.0.0.1:9443/validate"},
		{"service without a path", admissionregistrationv1.WebhookClientConfig{Service: &admissionregistrationv1.ServiceReference{Name: "s"}}, "https://127.0.0.1:9443/"},
		{"URL", admissionregistrationv1.WebhookClientConfig{URL: &other, CABundle: []byte("old")}, other},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := tt.in
			o.point(&c)
			if c.URL == nil || *c.URL != tt.url || c.Service != nil || string(c.CABundle) != "CA" {
				t.Errorf("url %v, service %v, caBundle %q; want %s, no service, CA", c.URL, c.Service, c.CABundle, tt.url)
			}
		})
	}
}

func TestServingTemplate(t *testing.T) {
	ipTmpl, nameTmpl := servingTemplate("10.1.2.3"), servingTemplate("webhooks.test")
	if n := len(ipTmpl.IPAddresses); n != 3 || !ipTmpl.IPAddresses[2].Equal([]byte{10, 1, 2, 3}) {
		t.Errorf("for an IP: addresses %v, want loopback's and 10.1.2.3", ipTmpl.IPAddresses)
	}
	if got := nameTmpl.DNSNames; len(got) != 2 || got[1] != "webhooks.test" {
		t.Errorf("for a name: DNS names %q, want [localhost webhooks.test]", got)
	}
}
