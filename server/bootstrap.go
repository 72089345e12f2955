package server

import (
	"context"
	"fmt"
	"log/slog"
	"net"

	clientv3 "go.etcd.io/etcd/client/v3"
	utilnet "k8s.io/apimachinery/pkg/util/net"

	"github.com/stratadev/strata/bootstrap"
	"github.com/stratadev/strata/registry/servicealloc"
	"github.com/stratadev/strata/storage"
)

// startKubernetesService starts the controllers of package bootstrap for a
// server listening on port: the repairs of the Services' allocations (it
// returns once they have run), the `kubernetes` Service and the default
// ServiceCIDR.
func startKubernetesService(ctx context.Context, o *Options, sh *shared, client *clientv3.Client, port int,
	log *slog.Logger) (*bootstrap.Controller, error) {
	serviceIPs, nodePorts, err := o.serviceRanges()
	if err != nil {
		return nil, err
	}
	serviceIP, err := servicealloc.KubernetesServiceIP(serviceIPs)
	if err != nil {
		return nil, fmt.Errorf("--service-cluster-ip-range: %w", err)
	}
	registries, err := servicealloc.NewRegistries(servicealloc.Config{Client: client, Prefix: storage.DefaultPrefix,
		ClusterIPRange: serviceIPs, NodePortRange: nodePorts})
	if err != nil {
		return nil, err
	}
	c, err := bootstrap.KubernetesService{Client: sh.client, ServiceIP: serviceIP,
		PublicIP: advertiseAddress(o, log), SecurePort: port, ServiceCIDR: serviceIPs,
		Repair: &bootstrap.Repair{Registries: registries, ClusterIPRange: serviceIPs, NodePortRange: nodePorts}}.Start(ctx)
	if err != nil {
		return nil, err
	}
	return c, nil
}

// advertiseAddress is the address the `kubernetes` endpoints name, chosen
// as kube-apiserver chooses its --advertise-address: the bind address, or
// the host's default address when that is loopback or unspecified (an
// Endpoints address may not be loopback). nil when there is none: the
// Service then has no endpoints.
func advertiseAddress(o *Options, log *slog.Logger) net.IP {
	if o.AdvertiseAddress != "" {
		return net.ParseIP(o.AdvertiseAddress)
	}
	ip, err := utilnet.ResolveBindAddress(net.ParseIP(o.BindAddress))
	if err != nil || ip.IsLoopback() {
		log.Warn("no address for the kubernetes Service's endpoints (set --advertise-address)", "err", err)
		return nil
	}
	return ip
}
