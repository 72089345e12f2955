package bootstrap

import (
	"context"
	"errors"
	"net"
	"sync"
	"time"

	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/kubernetes"
	ipcontroller "k8s.io/kubernetes/pkg/registry/core/service/ipallocator/controller"
	portcontroller "k8s.io/kubernetes/pkg/registry/core/service/portallocator/controller"

	"github.com/stratadev/strata/registry/servicealloc"
)

// DefaultRepairInterval is kube-apiserver's: how often the allocations are
// checked against the Services.
const DefaultRepairInterval = 3 * time.Minute

// repairTimeout is how long kube-apiserver waits for the first repair.
const repairTimeout = time.Minute

// Repair configures kube-apiserver's repair controllers of Services'
// cluster IPs and node ports.
type Repair struct {
	Registries     servicealloc.Registries
	ClusterIPRange *net.IPNet
	NodePortRange  utilnet.PortRange
	// Interval: see DefaultRepairInterval.
	Interval time.Duration
}

// start runs both repairs and returns once each has succeeded once (the
// bitmaps then match the Services), as kube-apiserver's post-start hook
// start-service-ip-repair-controllers waits; they go on until stop closes.
func (r *Repair) start(ctx context.Context, client kubernetes.Interface, stop chan struct{}) error {
	if r.Interval <= 0 {
		r.Interval = DefaultRepairInterval
	}
	ips := ipcontroller.NewRepair(r.Interval, client.CoreV1(), client.EventsV1(), r.ClusterIPRange,
		r.Registries.ClusterIPs, nil, nil)
	ports := portcontroller.NewRepair(r.Interval, client.CoreV1(), client.EventsV1(), r.NodePortRange,
		r.Registries.NodePorts)
	var wg sync.WaitGroup
	wg.Add(2)
	go ips.RunUntil(wg.Done, stop)
	go ports.RunUntil(wg.Done, stop)
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(repairTimeout):
		return errors.New("unable to perform initial IP and Port allocation check (timeout)")
	}
}
