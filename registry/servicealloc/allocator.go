package servicealloc

import (
	"context"
	"fmt"
	"net"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apiserver/pkg/registry/generic"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/storage"
	"k8s.io/apiserver/pkg/storage/storagebackend"
	"k8s.io/apiserver/pkg/storage/storagebackend/factory"
	"k8s.io/client-go/tools/cache"
	api "k8s.io/kubernetes/pkg/apis/core"
	"k8s.io/kubernetes/pkg/registry/core/service/allocator"
	"k8s.io/kubernetes/pkg/registry/core/service/ipallocator"
	"k8s.io/kubernetes/pkg/registry/core/service/portallocator"
	svcstorage "k8s.io/kubernetes/pkg/registry/core/service/storage"
	netutils "k8s.io/utils/net"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/stratadev/strata/registry"
)

// kube-apiserver's defaults of --service-cluster-ip-range and
// --service-node-port-range.
const (
	DefaultServiceClusterIPRange = "10.96.0.0/12"
	DefaultServiceNodePortRange  = "30000-32767"
)

// Config says where the allocations live and what they are taken from.
type Config struct {
	// Client reaches etcd; Prefix is the key prefix of the server's objects
	// (storage.DefaultPrefix): the bitmaps are kept under
	// {Prefix}/ranges/serviceips and {Prefix}/ranges/servicenodeports, as
	// kube-apiserver keeps them.
	Client *clientv3.Client
	Prefix string
	// ClusterIPRange and NodePortRange are the ranges (default as
	// kube-apiserver's).
	ClusterIPRange *net.IPNet
	NodePortRange  utilnet.PortRange
}

// ParseClusterIPRange parses --service-cluster-ip-range: one CIDR (strata
// serves single-stack clusters), with kube-apiserver's checks of its size
// when it allocates from bitmaps (cmd/kube-apiserver/app/options).
func ParseClusterIPRange(s string) (*net.IPNet, error) {
	if strings.Contains(s, ",") {
		return nil, fmt.Errorf("--service-cluster-ip-range: %q: dual-stack ranges are not supported", s)
	}
	_, cidr, err := netutils.ParseCIDRSloppy(s)
	if err != nil {
		return nil, fmt.Errorf("--service-cluster-ip-range: %q: %w", s, err)
	}
	const maxCIDRBits = 20
	if ones, bits := cidr.Mask.Size(); bits-ones > maxCIDRBits {
		return nil, fmt.Errorf("specified --service-cluster-ip-range is too large; for %d-bit addresses, the mask must be >= %d",
			bits, bits-maxCIDRBits)
	}
	if netutils.RangeSize(cidr) < 8 {
		return nil, fmt.Errorf("--service-cluster-ip-range %s: the service cluster IP range must be at least 8 IP addresses", s)
	}
	return cidr, nil
}

// KubernetesServiceIP is the cluster IP of the kubernetes Service: the
// first of the range, as kube-apiserver picks it.
func KubernetesServiceIP(cidr *net.IPNet) (net.IP, error) {
	return netutils.GetIndexedIP(cidr, 1)
}

// ParseNodePortRange parses --service-node-port-range ("30000-32767").
func ParseNodePortRange(s string) (utilnet.PortRange, error) {
	pr, err := utilnet.ParsePortRange(s)
	if err != nil {
		return utilnet.PortRange{}, fmt.Errorf("--service-node-port-range: %q: %w", s, err)
	}
	return *pr, nil
}

// Allocator allocates Services' cluster IPs and node ports with
// kube-apiserver's own service REST logic (registry.Allocator).
type Allocator struct {
	create genericregistry.BeginCreateFunc
	update genericregistry.BeginUpdateFunc
	delete genericregistry.AfterDeleteFunc
}

var _ registry.Allocator = (*Allocator)(nil)

// New builds the allocator: upstream's bitmap IP and port allocators over
// etcd (etcdRange), and upstream's service REST, whose create, update and
// delete hooks decide what to allocate and release.
func New(cfg Config) (*Allocator, error) {
	cfg, err := cfg.complete()
	if err != nil {
		return nil, err
	}
	prefix := strings.TrimSuffix(cfg.Prefix, "/")
	ips, err := ipallocator.New(cfg.ClusterIPRange, rangeIn(cfg.Client, prefix+ipKey))
	if err != nil {
		return nil, fmt.Errorf("service cluster IP range %s: %w", cfg.ClusterIPRange, err)
	}
	ports, err := portallocator.New(cfg.NodePortRange, rangeIn(cfg.Client, prefix+portKey))
	if err != nil {
		return nil, fmt.Errorf("service node port range %s: %w", cfg.NodePortRange.String(), err)
	}
	family := ips.IPFamily()
	rest, _, _, err := svcstorage.NewREST(unusedStorage{}, family,
		map[api.IPFamily]ipallocator.Interface{family: ips}, ports, nil, nil, nil)
	if err != nil {
		return nil, fmt.Errorf("service allocation: %w", err)
	}
	return &Allocator{create: rest.BeginCreate, update: rest.BeginUpdate, delete: rest.AfterDelete}, nil
}

func rangeIn(client *clientv3.Client, key string) allocator.AllocatorWithOffsetFactory {
	return func(max int, rangeSpec string, offset int) (allocator.Interface, error) {
		return newEtcdRange(client, key, max, rangeSpec, offset), nil
	}
}

// BeginCreate allocates a new Service's cluster IPs and node ports, and
// fills ipFamilies and ipFamilyPolicy, as kube-apiserver's BeginCreate.
func (a *Allocator) BeginCreate(ctx context.Context, obj runtime.Object, dryRun bool) (func(bool), error) {
	finish, err := a.create(ctx, obj, &metav1.CreateOptions{DryRun: dryRunOption(dryRun)})
	if err != nil {
		return nil, err
	}
	return func(success bool) { finish(ctx, success) }, nil
}

// BeginUpdate allocates what an update adds (a type change to NodePort, a
// new port); committing releases what it drops (a change to ExternalName
// releases the cluster IPs).
func (a *Allocator) BeginUpdate(ctx context.Context, obj, old runtime.Object, dryRun bool) (func(bool), error) {
	finish, err := a.update(ctx, obj, old, &metav1.UpdateOptions{DryRun: dryRunOption(dryRun)})
	if err != nil {
		return nil, err
	}
	return func(success bool) { finish(ctx, success) }, nil
}

// Release frees a deleted Service's cluster IPs and node ports.
func (a *Allocator) Release(obj runtime.Object) {
	a.delete(obj, &metav1.DeleteOptions{})
}

func dryRunOption(dryRun bool) []string {
	if dryRun {
		return []string{metav1.DryRunAll}
	}
	return nil
}

// unusedStorage lets upstream's service REST be built for its allocation
// hooks only: strata stores Services itself, so the generic store under
// the REST is never asked to read or write (its storage.Interface methods
// would panic on the nil embedded interface).
type unusedStorage struct{ storage.Interface }

// GetRESTOptions implements generic.RESTOptionsGetter.
func (unusedStorage) GetRESTOptions(schema.GroupResource, runtime.Object) (generic.RESTOptions, error) {
	return generic.RESTOptions{
		StorageConfig:  &storagebackend.ConfigForResource{},
		ResourcePrefix: "/services",
		Decorator: func(*storagebackend.ConfigForResource, string, func(runtime.Object) (string, error),
			func() runtime.Object, func() runtime.Object, storage.AttrFunc, storage.IndexerFuncs,
			*cache.Indexers) (storage.Interface, factory.DestroyFunc, error) {
			return unusedStorage{}, func() {}, nil
		},
	}, nil
}

// ReadinessCheck is read (as a method value) when the store is completed.
func (unusedStorage) ReadinessCheck() error { return nil }
