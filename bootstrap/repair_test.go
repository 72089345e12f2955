package bootstrap

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	api "k8s.io/kubernetes/pkg/apis/core"

	"github.com/stratadev/strata/registry/servicealloc"
	"github.com/stratadev/strata/storage"
)

// TestRepair: Services whose cluster IPs and node ports the stored bitmaps
// do not hold (a data directory from before strata allocated, here
// bitmaps of another range) are taken in by the repair at start, and the
// allocations move to the configured range.
func TestRepair(t *testing.T) {
	_, client, etcdClient := startAPI(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	old := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "old"}, Spec: corev1.ServiceSpec{
		Type: corev1.ServiceTypeNodePort, ClusterIP: "10.96.0.50",
		Ports: []corev1.ServicePort{{Port: 80, NodePort: 30050}}}}
	if _, err := client.CoreV1().Services("default").Create(ctx, old, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// Forget the allocations: bitmaps of another range replace them.
	_, other, _ := net.ParseCIDR("10.0.0.0/24")
	stale, err := servicealloc.NewRegistries(servicealloc.Config{Client: etcdClient, Prefix: storage.DefaultPrefix,
		ClusterIPRange: other})
	if err != nil {
		t.Fatal(err)
	}
	forget(t, stale, other)

	_, cidr, _ := net.ParseCIDR(servicealloc.DefaultServiceClusterIPRange)
	ports, _ := servicealloc.ParseNodePortRange(servicealloc.DefaultServiceNodePortRange)
	registries, err := servicealloc.NewRegistries(servicealloc.Config{Client: etcdClient, Prefix: storage.DefaultPrefix})
	if err != nil {
		t.Fatal(err)
	}
	c, err := KubernetesService{Client: client, ServiceIP: net.ParseIP("10.96.0.1"), SecurePort: 6443,
		Repair: &Repair{Registries: registries, ClusterIPRange: cidr, NodePortRange: ports}}.Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Stop()

	cases := []struct {
		name    string
		spec    corev1.ServiceSpec
		wantErr string
	}{
		{"old's IP", corev1.ServiceSpec{ClusterIP: "10.96.0.50", Ports: []corev1.ServicePort{{Port: 80}}},
			"provided IP is already allocated"},
		{"old's node port", corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort,
			Ports: []corev1.ServicePort{{Port: 80, NodePort: 30050}}}, "provided port is already allocated"},
		{"a new IP from the range", corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}, ""},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "new-" + string(rune('a'+i))}, Spec: tc.spec}
			_, err := client.CoreV1().Services("default").Create(ctx, s, metav1.CreateOptions{})
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (!apierrors.IsInvalid(err) || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Errorf("got %v, want %q", err, tc.wantErr)
			}
		})
	}
}

// forget replaces both stored bitmaps with empty ones of range ips (and
// 20000-20100 for ports).
func forget(t *testing.T, r servicealloc.Registries, ips *net.IPNet) {
	t.Helper()
	ports := utilnet.PortRange{Base: 20000, Size: 101}
	for reg, rangeSpec := range map[interface {
		Get() (*api.RangeAllocation, error)
		CreateOrUpdate(*api.RangeAllocation) error
	}]string{r.ClusterIPs: ips.String(), r.NodePorts: ports.String()} {
		cur, err := reg.Get()
		if err != nil {
			t.Fatal(err)
		}
		cur.Range, cur.Data = rangeSpec, nil
		if err := reg.CreateOrUpdate(cur); err != nil {
			t.Fatal(err)
		}
	}
}
