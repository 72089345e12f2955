package bootstrap

import (
	"context"
	"fmt"
	"net"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/stratadev/strata/apiserver"
	"github.com/stratadev/strata/apiserver/apitest"
)

// startAPI runs an API over an embedded etcd and returns it with a client
// that reaches it over HTTP.
func startAPI(t *testing.T) (*apiserver.Server, kubernetes.Interface, *clientv3.Client) {
	t.Helper()
	api := apitest.Start(t)
	return api.Server, kubernetes.NewForConfigOrDie(&rest.Config{Host: api.HTTP.URL, QPS: -1}), api.Etcd
}

// TestKubernetesService: after start the `kubernetes` Service exists as
// kube-apiserver creates it, with Endpoints and an EndpointSlice naming the
// server, and the default ServiceCIDR is Ready; a second start (a restart)
// keeps them.
func TestKubernetesService(t *testing.T) {
	_, client, _ := startAPI(t)
	public := net.ParseIP("192.0.2.10")
	_, cidr, _ := net.ParseCIDR("10.96.0.0/12")
	cfg := KubernetesService{Client: client, ServiceIP: net.ParseIP("10.96.0.1"), PublicIP: public,
		SecurePort: 6443, EndpointInterval: 200 * time.Millisecond, ServiceCIDR: cidr}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for round := range 2 {
		c, err := cfg.Start(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var svc *corev1.Service
		var ep *corev1.Endpoints
		eventually(t, func() error {
			if svc, err = client.CoreV1().Services("default").Get(ctx, "kubernetes", metav1.GetOptions{}); err != nil {
				return err
			}
			ep, err = client.CoreV1().Endpoints("default").Get(ctx, "kubernetes", metav1.GetOptions{})
			if err == nil && len(ep.Subsets) == 0 {
				return fmt.Errorf("round %d: the endpoints name no address yet", round)
			}
			return err
		})
		checkService(t, svc)
		if len(ep.Subsets) != 1 || len(ep.Subsets[0].Addresses) != 1 || ep.Subsets[0].Addresses[0].IP != public.String() ||
			len(ep.Subsets[0].Ports) != 1 || ep.Subsets[0].Ports[0].Port != 6443 || ep.Subsets[0].Ports[0].Name != "https" {
			t.Errorf("round %d: endpoints %+v, want %s:6443 (https)", round, ep.Subsets, public)
		}
		eventually(t, func() error {
			_, err := client.DiscoveryV1().EndpointSlices("default").Get(ctx, "kubernetes", metav1.GetOptions{})
			return err
		})
		eventually(t, func() error {
			sc, err := client.NetworkingV1().ServiceCIDRs().Get(ctx, "kubernetes", metav1.GetOptions{})
			if err != nil {
				return err
			}
			if len(sc.Spec.CIDRs) != 1 || sc.Spec.CIDRs[0] != "10.96.0.0/12" || len(sc.Status.Conditions) != 1 ||
				sc.Status.Conditions[0].Type != "Ready" || sc.Status.Conditions[0].Status != metav1.ConditionTrue {
				return fmt.Errorf("ServiceCIDR kubernetes: %+v %+v, want 10.96.0.0/12 and Ready", sc.Spec, sc.Status)
			}
			return nil
		})
		c.Stop()
	}
}

func checkService(t *testing.T, svc *corev1.Service) {
	t.Helper()
	if svc.Spec.ClusterIP != "10.96.0.1" || svc.Spec.Type != corev1.ServiceTypeClusterIP {
		t.Errorf("clusterIP %s type %s, want 10.96.0.1 ClusterIP", svc.Spec.ClusterIP, svc.Spec.Type)
	}
	if len(svc.Spec.Ports) != 1 {
		t.Fatalf("ports %+v, want one", svc.Spec.Ports)
	}
	p := svc.Spec.Ports[0]
	if p.Name != "https" || p.Port != 443 || p.TargetPort.IntValue() != 6443 || p.Protocol != corev1.ProtocolTCP {
		t.Errorf("port %+v, want https 443 → 6443 TCP", p)
	}
	if svc.Labels["component"] != "apiserver" || svc.Labels["provider"] != "kubernetes" {
		t.Errorf("labels %v, want component=apiserver provider=kubernetes", svc.Labels)
	}
}

func eventually(t *testing.T, f func() error) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal(err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
