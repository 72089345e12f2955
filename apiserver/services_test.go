package apiserver

import (
	"context"
	"fmt"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"

	"github.com/stratadev/strata/storage"
)

// svc is a Service of type t on port 80; edit tweaks it.
func svc(name string, t corev1.ServiceType, edit ...func(*corev1.ServiceSpec)) *corev1.Service {
	s := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.ServiceSpec{Type: t,
		Selector: map[string]string{"app": name},
		Ports:    []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080)}}}}
	if t == corev1.ServiceTypeExternalName {
		s.Spec.ExternalName = "example.com"
		s.Spec.Selector = nil
	}
	for _, f := range edit {
		f(&s.Spec)
	}
	return s
}

func withClusterIP(ip string) func(*corev1.ServiceSpec) {
	return func(s *corev1.ServiceSpec) { s.ClusterIP = ip }
}

func withNodePort(port int32) func(*corev1.ServiceSpec) {
	return func(s *corev1.ServiceSpec) { s.Ports[0].NodePort = port }
}

var serviceRange = mustCIDR("10.96.0.0/12")

func mustCIDR(s string) *net.IPNet {
	_, n, err := net.ParseCIDR(s)
	if err != nil {
		panic(err)
	}
	return n
}

// allocatedIP checks that s has one IPv4 cluster IP from the default range
// and the single-stack fields kube-apiserver fills.
func allocatedIP(t *testing.T, s *corev1.Service) {
	t.Helper()
	ip := net.ParseIP(s.Spec.ClusterIP)
	if ip == nil || !serviceRange.Contains(ip) {
		t.Errorf("clusterIP %q is not in %s", s.Spec.ClusterIP, serviceRange)
	}
	if len(s.Spec.ClusterIPs) != 1 || s.Spec.ClusterIPs[0] != s.Spec.ClusterIP {
		t.Errorf("clusterIPs %q, want [%q]", s.Spec.ClusterIPs, s.Spec.ClusterIP)
	}
	if len(s.Spec.IPFamilies) != 1 || s.Spec.IPFamilies[0] != corev1.IPv4Protocol {
		t.Errorf("ipFamilies %q, want [IPv4]", s.Spec.IPFamilies)
	}
	if p := s.Spec.IPFamilyPolicy; p == nil || *p != corev1.IPFamilyPolicySingleStack {
		t.Errorf("ipFamilyPolicy %v, want SingleStack", p)
	}
}

func nodePortIn(t *testing.T, s *corev1.Service) {
	t.Helper()
	for _, p := range s.Spec.Ports {
		if p.NodePort < 30000 || p.NodePort > 32767 {
			t.Errorf("port %s: nodePort %d not in 30000-32767", p.Name, p.NodePort)
		}
	}
}

// TestServiceAllocation creates Services in order on one server: each row
// sees what the rows before it allocated.
func TestServiceAllocation(t *testing.T) {
	ts := newTestServer(t)
	ctx := context.Background()
	services := ts.client.CoreV1().Services("default")
	cases := []struct {
		name   string
		svc    *corev1.Service
		dryRun bool
		// wantErr is a part of the 422's message; check sees the result.
		wantErr string
		check   func(t *testing.T, s *corev1.Service)
	}{
		{name: "allocated", svc: svc("a", corev1.ServiceTypeClusterIP), check: allocatedIP},
		{name: "requested", svc: svc("b", corev1.ServiceTypeClusterIP, withClusterIP("10.96.0.10")),
			check: func(t *testing.T, s *corev1.Service) {
				allocatedIP(t, s)
				if s.Spec.ClusterIP != "10.96.0.10" {
					t.Errorf("clusterIP %s, want the requested 10.96.0.10", s.Spec.ClusterIP)
				}
			}},
		{name: "taken", svc: svc("c", corev1.ServiceTypeClusterIP, withClusterIP("10.96.0.10")),
			wantErr: `spec.clusterIPs: Invalid value: ["10.96.0.10"]: failed to allocate IP 10.96.0.10: provided IP is already allocated`},
		{name: "out of range", svc: svc("c", corev1.ServiceTypeClusterIP, withClusterIP("10.0.0.10")),
			wantErr: `failed to allocate IP 10.0.0.10: the provided IP (10.0.0.10) is not in the valid range. The range of valid IPs is 10.96.0.0/12`},
		{name: "dry run holds nothing", svc: svc("d", corev1.ServiceTypeClusterIP, withClusterIP("10.96.0.20")), dryRun: true,
			check: func(t *testing.T, s *corev1.Service) {
				if s.Spec.ClusterIP != "10.96.0.20" {
					t.Errorf("clusterIP %s, want 10.96.0.20", s.Spec.ClusterIP)
				}
			}},
		{name: "after dry run", svc: svc("d", corev1.ServiceTypeClusterIP, withClusterIP("10.96.0.20")), check: allocatedIP},
		{name: "node port allocated", svc: svc("np", corev1.ServiceTypeNodePort),
			check: func(t *testing.T, s *corev1.Service) { allocatedIP(t, s); nodePortIn(t, s) }},
		{name: "node port requested", svc: svc("np2", corev1.ServiceTypeNodePort, withNodePort(30080)),
			check: func(t *testing.T, s *corev1.Service) {
				if s.Spec.Ports[0].NodePort != 30080 {
					t.Errorf("nodePort %d, want the requested 30080", s.Spec.Ports[0].NodePort)
				}
			}},
		{name: "node port taken", svc: svc("np3", corev1.ServiceTypeNodePort, withNodePort(30080)),
			wantErr: `spec.ports[0].nodePort: Invalid value: 30080: provided port is already allocated`},
		{name: "node port out of range", svc: svc("np3", corev1.ServiceTypeNodePort, withNodePort(8080)),
			wantErr: `spec.ports[0].nodePort: Invalid value: 8080: provided port is not in the valid range. The range of valid ports is 30000-32767`},
		{name: "load balancer with health check port",
			svc: svc("lb", corev1.ServiceTypeLoadBalancer, func(s *corev1.ServiceSpec) {
				s.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal
			}),
			check: func(t *testing.T, s *corev1.Service) {
				allocatedIP(t, s)
				nodePortIn(t, s)
				if p := s.Spec.HealthCheckNodePort; p < 30000 || p > 32767 || p == s.Spec.Ports[0].NodePort {
					t.Errorf("healthCheckNodePort %d: want a port of its own in 30000-32767", p)
				}
			}},
		{name: "headless", svc: svc("h", corev1.ServiceTypeClusterIP, withClusterIP("None")),
			check: func(t *testing.T, s *corev1.Service) {
				if s.Spec.ClusterIP != "None" || len(s.Spec.ClusterIPs) != 1 || s.Spec.ClusterIPs[0] != "None" {
					t.Errorf("clusterIP %q clusterIPs %q, want None", s.Spec.ClusterIP, s.Spec.ClusterIPs)
				}
			}},
		{name: "external name", svc: svc("x", corev1.ServiceTypeExternalName),
			check: func(t *testing.T, s *corev1.Service) {
				if s.Spec.ClusterIP != "" || len(s.Spec.ClusterIPs) != 0 || len(s.Spec.IPFamilies) != 0 {
					t.Errorf("clusterIP %q clusterIPs %q ipFamilies %q, want none", s.Spec.ClusterIP, s.Spec.ClusterIPs, s.Spec.IPFamilies)
				}
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			opts := metav1.CreateOptions{}
			if tc.dryRun {
				opts.DryRun = []string{metav1.DryRunAll}
			}
			out, err := services.Create(ctx, tc.svc, opts)
			if tc.wantErr != "" {
				if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("got %v, want 422 with %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, out)
		})
	}
}

// TestServiceReleases: what a deleted Service held, or what an update drops,
// can be requested again; an update keeps what it does not change.
func TestServiceReleases(t *testing.T) {
	ts := newTestServer(t)
	ctx := context.Background()
	services := ts.client.CoreV1().Services("default")
	mustCreate := func(s *corev1.Service) *corev1.Service {
		t.Helper()
		out, err := services.Create(ctx, s, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("create %s: %v", s.Name, err)
		}
		return out
	}
	a := mustCreate(svc("a", corev1.ServiceTypeNodePort, withClusterIP("10.96.0.10"), withNodePort(30080)))
	if err := services.Delete(ctx, a.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	mustCreate(svc("b", corev1.ServiceTypeNodePort, withClusterIP("10.96.0.10"), withNodePort(30080)))

	// ClusterIP → NodePort allocates a node port and keeps the IP.
	c := mustCreate(svc("c", corev1.ServiceTypeClusterIP))
	c.Spec.Type = corev1.ServiceTypeNodePort
	c2, err := services.Update(ctx, c, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if c2.Spec.ClusterIP != c.Spec.ClusterIP {
		t.Errorf("clusterIP changed from %s to %s", c.Spec.ClusterIP, c2.Spec.ClusterIP)
	}
	nodePortIn(t, c2)
	// → ExternalName releases the IP and the node port.
	c2.Spec = svc("c", corev1.ServiceTypeExternalName).Spec
	c3, err := services.Update(ctx, c2, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if c3.Spec.ClusterIP != "" || len(c3.Spec.ClusterIPs) != 0 {
		t.Errorf("ExternalName kept clusterIPs %q", c3.Spec.ClusterIPs)
	}
	mustCreate(svc("d", corev1.ServiceTypeNodePort, withClusterIP(c.Spec.ClusterIP),
		withNodePort(c2.Spec.Ports[0].NodePort)))

	// A rejected update (taken port) changes nothing and holds nothing.
	e := mustCreate(svc("e", corev1.ServiceTypeClusterIP))
	e.Spec.Type = corev1.ServiceTypeNodePort
	e.Spec.Ports = append(e.Spec.Ports, corev1.ServicePort{Name: "b", Port: 81, NodePort: 30099})
	e.Spec.Ports[0].NodePort = 30080 // b's
	if _, err := services.Update(ctx, e, metav1.UpdateOptions{}); !apierrors.IsInvalid(err) {
		t.Fatalf("update onto a taken node port: got %v, want 422", err)
	}
	mustCreate(svc("f", corev1.ServiceTypeNodePort, withNodePort(30099)))

	// Deleting a namespace releases its Services' IPs.
	if _, err := ts.client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "gone"}},
		metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	g := svc("g", corev1.ServiceTypeClusterIP, withClusterIP("10.96.0.30"))
	if _, err := ts.client.CoreV1().Services("gone").Create(ctx, g, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := ts.client.CoreV1().Namespaces().Delete(ctx, "gone", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() error {
		_, err := services.Create(ctx, svc("h", corev1.ServiceTypeClusterIP, withClusterIP("10.96.0.30")), metav1.CreateOptions{})
		return err
	})
}

// waitFor retries f for a few seconds until it succeeds.
func waitFor(t *testing.T, f func() error) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
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

// sharedPrefix makes servers keep their objects (and allocations) under
// one key prefix, as replicas on one etcd.
func sharedPrefix(prefix string) func(*Config) {
	return func(c *Config) {
		inner := c.Storage
		c.Storage = func(sc *storage.Config) {
			inner(sc)
			sc.Prefix = prefix
		}
	}
}

// TestServiceAllocationTwoReplicas creates Services concurrently through two
// servers on one etcd: no cluster IP or node port is handed out twice.
func TestServiceAllocationTwoReplicas(t *testing.T) {
	prefix := fmt.Sprintf("/test-%d-replicas-%d/registry", os.Getpid(), serverSeq.Add(1))
	replicas := []*testServer{newTestServer(t, sharedPrefix(prefix)), newTestServer(t, sharedPrefix(prefix))}
	const each = 50
	var wg sync.WaitGroup
	errs := make(chan error, 2*each)
	for r, ts := range replicas {
		for i := range each {
			wg.Add(1)
			go func(c kubernetes.Interface, name string) {
				defer wg.Done()
				_, err := c.CoreV1().Services("default").Create(context.Background(),
					svc(name, corev1.ServiceTypeNodePort), metav1.CreateOptions{})
				if err != nil {
					errs <- fmt.Errorf("%s: %w", name, err)
				}
			}(ts.client, fmt.Sprintf("s-%d-%d", r, i))
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	list, err := replicas[0].client.CoreV1().Services("default").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ips, ports := map[string]string{}, map[int32]string{}
	for _, s := range list.Items {
		if other, ok := ips[s.Spec.ClusterIP]; ok {
			t.Errorf("%s and %s share cluster IP %s", s.Name, other, s.Spec.ClusterIP)
		}
		ips[s.Spec.ClusterIP] = s.Name
		for _, p := range s.Spec.Ports {
			if other, ok := ports[p.NodePort]; ok {
				t.Errorf("%s and %s share node port %d", s.Name, other, p.NodePort)
			}
			ports[p.NodePort] = s.Name
		}
	}
	if len(ips) != 2*each {
		t.Errorf("%d services with distinct IPs, want %d", len(ips), 2*each)
	}
}

// TestServiceAllocationSurvivesRestart: a new server on the same etcd does
// not hand out what an earlier one allocated.
func TestServiceAllocationSurvivesRestart(t *testing.T) {
	prefix := fmt.Sprintf("/test-%d-restart-%d/registry", os.Getpid(), serverSeq.Add(1))
	first := newTestServer(t, sharedPrefix(prefix))
	ctx := context.Background()
	a, err := first.client.CoreV1().Services("default").Create(ctx, svc("a", corev1.ServiceTypeNodePort), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	first.http.Close()
	first.api.Close()
	second := newTestServer(t, sharedPrefix(prefix))
	_, err = second.client.CoreV1().Services("default").Create(ctx,
		svc("b", corev1.ServiceTypeClusterIP, withClusterIP(a.Spec.ClusterIP)), metav1.CreateOptions{})
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "provided IP is already allocated") {
		t.Errorf("requesting %s after a restart: got %v, want 422 already allocated", a.Spec.ClusterIP, err)
	}
	_, err = second.client.CoreV1().Services("default").Create(ctx,
		svc("c", corev1.ServiceTypeNodePort, withNodePort(a.Spec.Ports[0].NodePort)), metav1.CreateOptions{})
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "provided port is already allocated") {
		t.Errorf("requesting node port %d after a restart: got %v, want 422 already allocated", a.Spec.Ports[0].NodePort, err)
	}
}
