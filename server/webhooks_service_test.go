package server

import (
	"net"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/stratadev/strata/internal/loopdial"
)

// testWebhookService: a webhook's service reference is resolved through
// the Service's EndpointSlice to the webhook server (an EndpointSlice may
// not name a loopback address: it names loopdial.EndpointIP, which the
// server dials on 127.0.0.1), and called
// by the Service's DNS name.
func testWebhookService(t *testing.T, e *hookEnv) {
	hook := startHookServer(t, net.IPv4(127, 0, 0, 1))
	const ns = "webhooks" // hookServerName's namespace
	e.namespace(t, ns, nil)
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "hook"}, Spec: corev1.ServiceSpec{
		Ports: []corev1.ServicePort{{Name: "https", Port: 443, TargetPort: intstr.FromInt32(hook.port())}}}}
	if _, err := e.client.CoreV1().Services(ns).Create(t.Context(), svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	slice := &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: "hook-1", Labels: map[string]string{discoveryv1.LabelServiceName: "hook"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints: []discoveryv1.Endpoint{{Addresses: []string{loopdial.EndpointIP},
			Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}}},
		Ports: []discoveryv1.EndpointPort{{Name: ptr.To("https"), Port: ptr.To(hook.port()), Protocol: ptr.To(corev1.ProtocolTCP)}},
	}
	if _, err := e.client.DiscoveryV1().EndpointSlices(ns).Create(t.Context(), slice, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	h := e.webhook("service.example.com", "", ns)
	h.ClientConfig = admissionregistrationv1.WebhookClientConfig{CABundle: hook.caPEM,
		Service: &admissionregistrationv1.ServiceReference{Namespace: ns, Name: "hook", Path: ptr.To("/deny"), Port: ptr.To[int32](443)}}
	e.validating(t, ns, h)
	hook.awaitCalled(t, "/deny", ns, e.probeConfigMap(ns, nil))
	want := `admission webhook "service.example.com" denied the request: no thanks`
	if _, got := e.createConfigMap(t, ns, "s", nil, false); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
