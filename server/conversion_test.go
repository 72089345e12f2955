package server

import (
	"context"
	"encoding/base64"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/stratadev/strata/internal/convhook"
	"github.com/stratadev/strata/internal/loopdial"
)

// TestConversionWebhookServiceReference: strata server calls a CRD's
// conversion webhook named by a service reference at one of the Service's
// ready endpoints (an EndpointSlice may not name a loopback address: it
// names loopdial.EndpointIP, which the server dials on 127.0.0.1).
func TestConversionWebhookServiceReference(t *testing.T) {
	hook := convhook.NewFor(t, "converter.default.svc", "127.0.0.1")
	port := int32(hook.Srv.Listener.Addr().(*net.TCPAddr).Port)
	s := startConversionServer(t)
	ctx := context.Background()
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "converter"}, Spec: corev1.ServiceSpec{
		Ports: []corev1.ServicePort{{Name: "https", Port: 443, TargetPort: intstr.FromInt32(port)}}}}
	if _, err := s.client.CoreV1().Services("default").Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	slice := &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: "converter-1", Labels: map[string]string{discoveryv1.LabelServiceName: "converter"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{loopdial.EndpointIP}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}}},
		Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("https"), Port: ptr.To(port), Protocol: ptr.To(corev1.ProtocolTCP)}},
	}
	if _, err := s.client.DiscoveryV1().EndpointSlices("default").Create(ctx, slice, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	data, err := os.ReadFile("../apiserver/testdata/conversion/backends-crd.yaml")
	if err != nil {
		t.Fatal(err)
	}
	crd := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(data, &crd.Object); err != nil {
		t.Fatal(err)
	}
	_ = unstructured.SetNestedField(crd.Object, map[string]any{
		"service":  map[string]any{"namespace": "default", "name": "converter", "path": "/convert", "port": int64(443)},
		"caBundle": base64.StdEncoding.EncodeToString(hook.CABundle()),
	}, "spec", "conversion", "webhook", "clientConfig")
	crdGVR := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	if _, err := s.dynamic.Resource(crdGVR).Create(ctx, crd, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	v1 := s.dynamic.Resource(schema.GroupVersionResource{Group: "stable.example.com", Version: "v1", Resource: "backends"}).Namespace("default")
	v2 := s.dynamic.Resource(schema.GroupVersionResource{Group: "stable.example.com", Version: "v2", Resource: "backends"}).Namespace("default")
	b := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "stable.example.com/v2", "kind": "Backend",
		"metadata": map[string]any{"name": "a"}, "spec": map[string]any{"address": "db:5432"}}}
	waitWithin(t, 10*time.Second, "a Backend is created in v2", func() (bool, error) {
		_, err := v2.Create(ctx, b, metav1.CreateOptions{})
		return err == nil, nil
	})
	got, err := v1.Get(ctx, "a", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if spec, _, _ := unstructured.NestedMap(got.Object, "spec"); spec["host"] != "db" || spec["port"] != int64(5432) {
		t.Errorf("a in v1 has spec %v, want host db, port 5432", spec)
	}
	if hook.Calls.Load() == 0 {
		t.Error("the webhook was not called")
	}
}

type conversionServer struct {
	client  kubernetes.Interface
	dynamic dynamic.Interface
}

// startConversionServer starts a whole server that dials service
// references with loopdial, as the webhook's EndpointSlice needs.
func startConversionServer(t *testing.T) *conversionServer {
	t.Helper()
	o := NewOptions()
	o.webhookDial = loopdial.Dial
	o.DataDir = filepath.Join(t.TempDir(), "strata")
	o.BindAddress = "127.0.0.1"
	o.SecurePort = 0
	o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	_, cfg := start(t, o)
	return &conversionServer{client: kubernetes.NewForConfigOrDie(cfg), dynamic: dynamic.NewForConfigOrDie(cfg)}
}
