package apiserver

import (
	"context"
	"encoding/base64"
	"net"
	"net/url"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/stratadev/strata/internal/convhook"
	"github.com/stratadev/strata/internal/loopdial"
)

// TestConversionWebhookService: a webhook named by a service reference is
// called at one of the Service's ready endpoints, over TLS checked for the
// name <service>.<namespace>.svc with the caBundle. An EndpointSlice may
// not name a loopback address: it names loopdial.EndpointIP, which the
// test's webhook client dials on 127.0.0.1.
func TestConversionWebhookService(t *testing.T) {
	hook := convhook.NewFor(t, "converter.default.svc", "127.0.0.1")
	ts, _ := conversionServer(t, webhookClient(func(cfg *rest.Config) { cfg.Dial = loopdial.Dial }))
	inf := informers.NewSharedInformerFactory(ts.client, 0)
	resolver, err := NewEndpointServiceResolver(inf, &url.URL{Scheme: "https", Host: ts.http.Listener.Addr().String()})
	if err != nil {
		t.Fatal(err)
	}
	ts.api.SetServiceResolver(resolver)
	stop := make(chan struct{})
	defer close(stop)
	inf.Start(stop)

	ctx := context.Background()
	port := hook.Srv.Listener.Addr().(*net.TCPAddr).Port
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "converter"}, Spec: corev1.ServiceSpec{
		Ports: []corev1.ServicePort{{Name: "https", Port: 443, TargetPort: intstr.FromInt32(int32(port))}}}}
	if _, err := ts.client.CoreV1().Services("default").Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	slice := &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: "converter-1", Labels: map[string]string{discoveryv1.LabelServiceName: "converter"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{loopdial.EndpointIP}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}}},
		Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("https"), Port: ptr.To(int32(port)), Protocol: ptr.To(corev1.ProtocolTCP)}},
	}
	if _, err := ts.client.DiscoveryV1().EndpointSlices("default").Create(ctx, slice, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 5*time.Second, func() string {
		if _, err := resolver.ResolveEndpoint("default", "converter", 443); err != nil {
			return err.Error()
		}
		return ""
	})

	createBackendsCRD(t, ts, map[string]any{
		"service":  map[string]any{"namespace": "default", "name": "converter", "path": "/convert", "port": int64(443)},
		"caBundle": base64.StdEncoding.EncodeToString(hook.CABundle()),
	})
	created, err := backends(ts, "v2").Create(ctx, backend("v2", "a", specAv), metav1.CreateOptions{})
	if diff := cmp.Diff(want("v2", "a", specAv), mustBrief(t)(created, err)); diff != "" {
		t.Errorf("create in v2 (-want +got):\n%s", diff)
	}
	got, err := backends(ts, "v1").Get(ctx, "a", metav1.GetOptions{})
	if diff := cmp.Diff(want("v1", "a", specA), mustBrief(t)(got, err)); diff != "" {
		t.Errorf("get in v1 (-want +got):\n%s", diff)
	}
	if hook.Calls.Load() == 0 {
		t.Error("the webhook was not called")
	}
}
