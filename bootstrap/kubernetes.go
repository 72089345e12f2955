package bootstrap

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/storage"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/kubernetes/pkg/controlplane/controller/defaultservicecidr"
	"k8s.io/kubernetes/pkg/controlplane/controller/kubernetesservice"
	"k8s.io/kubernetes/pkg/controlplane/reconcilers"
)

// DefaultEndpointInterval is kube-apiserver's
// DefaultEndpointReconcilerInterval: how often the Service and its
// endpoints are checked.
const DefaultEndpointInterval = 10 * time.Second

// KubernetesService configures the `kubernetes` Service.
type KubernetesService struct {
	// Client reaches the API as the server itself (package loopback):
	// the controllers' client is privileged, like kube-apiserver's.
	Client kubernetes.Interface
	// ServiceIP is the Service's cluster IP (the first of the range).
	ServiceIP net.IP
	// PublicIP is the address the endpoints name (kube-apiserver's
	// --advertise-address); nil for no endpoints (none could be found).
	PublicIP net.IP
	// SecurePort is the server's port: the Service's targetPort and the
	// endpoints' port. The Service itself listens on 443, as kube-apiserver's.
	SecurePort int
	// EndpointInterval: see DefaultEndpointInterval.
	EndpointInterval time.Duration
	// ServiceCIDR, when set, is the range of the default ServiceCIDR object
	// (networking.k8s.io/v1, named kubernetes), created and marked Ready
	// as kube-apiserver's defaultservicecidr controller does.
	ServiceCIDR *net.IPNet
	// Repair, when set, checks the Services' allocations at start and
	// then periodically (repair.go).
	Repair *Repair
}

// kubernetesServicePort is the port of the `kubernetes` Service
// (kube-apiserver's --kubernetes-service-node-port aside, always 443).
const kubernetesServicePort = 443

// Controller is a running bootstrap controller.
type Controller struct {
	ctrl *kubernetesservice.Controller
	stop chan struct{}
	// stopCIDR ends the default ServiceCIDR's controller (nil: none).
	stopCIDR context.CancelFunc
}

// Start runs the controller: it returns once its informer has listed the
// Services, and creates the Service and endpoints in the background as
// soon as the API is ready.
func (k KubernetesService) Start(ctx context.Context) (*Controller, error) {
	if k.Client == nil || k.ServiceIP == nil {
		return nil, errors.New("bootstrap: the kubernetes Service needs the API and a cluster IP")
	}
	if k.EndpointInterval <= 0 {
		k.EndpointInterval = DefaultEndpointInterval
	}
	client := k.Client
	reconciler := reconcilers.NewNoneEndpointReconciler()
	publicIP := k.PublicIP
	if publicIP != nil {
		reconciler = reconcilers.NewMasterCountEndpointReconciler(1,
			reconcilers.NewEndpointsAdapter(client.CoreV1(), client.DiscoveryV1()))
	} else {
		publicIP = net.IPv4zero
	}
	factory := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithNamespace("default"))
	services := factory.Core().V1().Services()
	ctrl := kubernetesservice.New(kubernetesservice.Config{
		PublicIP:           publicIP,
		EndpointReconciler: &quietStart{EndpointReconciler: reconciler, client: client},
		EndpointInterval:   k.EndpointInterval,
		ServiceIP:          k.ServiceIP,
		ServicePort:        kubernetesServicePort,
		PublicServicePort:  k.SecurePort,
	}, client, services)
	c := &Controller{ctrl: ctrl, stop: make(chan struct{})}
	// The Services informer lists while the repairs run.
	factory.Start(c.stop)
	servicesSynced := services.Informer().HasSyncedChecker().Done()
	if k.Repair != nil {
		// The kubernetes Service is created from repaired bitmaps.
		if err := k.Repair.start(ctx, client, c.stop); err != nil {
			close(c.stop)
			return nil, fmt.Errorf("bootstrap: repairing the Services' allocations: %w", err)
		}
	}
	if k.ServiceCIDR != nil {
		// Its Start blocks until the object exists; the server does not wait.
		cidrCtx, cancel := context.WithCancel(context.Background())
		c.stopCIDR = cancel
		go defaultservicecidr.NewController(*k.ServiceCIDR, net.IPNet{}, client).Start(cidrCtx)
	}
	// The controller's Start polls for the informer's sync every 100 ms;
	// on a loaded start the list is rarely done at the first poll, and
	// the server would wait out the rest of the period before serving.
	// Waiting on the sync itself first, the poll finds it done at once.
	select {
	case <-servicesSynced:
	case <-ctx.Done():
		c.Stop()
		return nil, fmt.Errorf("bootstrap: waiting for the Services informer: %w", ctx.Err())
	}
	ctrl.Start(c.stop) // runs in the background once the informer has synced
	return c, nil
}

// Stop ends the controller: as kube-apiserver's, it removes the server
// from the endpoints first (another replica keeps its own).
func (c *Controller) Stop() {
	if c.stopCIDR != nil {
		c.stopCIDR()
	}
	c.ctrl.Stop()
	close(c.stop)
}

// quietStart is the endpoint reconciler kube-apiserver uses with a fixed
// number of servers (one here: kube-apiserver's default, the lease
// reconciler, keeps leases in its own storage layer), except that removing
// endpoints that do not name this server says so. The controller's start
// removes this server's endpoints left by an unclean exit and reports any
// removal as "Found stale data" at error level; the reconciler alone calls
// every removal one, even after a clean stop.
type quietStart struct {
	reconcilers.EndpointReconciler
	client kubernetes.Interface
	// started: the start's removal is done; the shutdown's is the
	// reconciler's own.
	started atomic.Bool
}

func (q *quietStart) RemoveEndpoints(serviceName string, ip net.IP, ports []corev1.EndpointPort) error {
	if q.started.Swap(true) {
		return q.EndpointReconciler.RemoveEndpoints(serviceName, ip, ports)
	}
	e, err := q.client.CoreV1().Endpoints(metav1.NamespaceDefault).Get(context.Background(), serviceName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) || err == nil && !names(e, ip) {
		return storage.NewKeyNotFoundError(serviceName, 0)
	}
	return q.EndpointReconciler.RemoveEndpoints(serviceName, ip, ports)
}

// names says whether the endpoints list ip.
func names(e *corev1.Endpoints, ip net.IP) bool {
	for _, s := range e.Subsets {
		for _, a := range s.Addresses {
			if a.IP == ip.String() {
				return true
			}
		}
	}
	return false
}
