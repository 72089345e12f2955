package apiserver

import (
	"fmt"
	"net/url"
	"sync/atomic"

	"k8s.io/apiserver/pkg/util/proxy"
	"k8s.io/apiserver/pkg/util/webhook"
	"k8s.io/client-go/informers"
	aggregator "k8s.io/kube-aggregator/pkg/apiserver"
)

// lateServiceResolver resolves the service references of conversion
// webhooks with the resolver set last, upstream's default (the cluster DNS
// name <service>.<namespace>.svc) until one is: the resolver that follows
// Services and their endpoints needs informers over the server itself,
// which exist only once the server does.
type lateServiceResolver struct {
	set atomic.Pointer[webhook.ServiceResolver]
}

var defaultServiceResolver = webhook.NewDefaultServiceResolver()

func (l *lateServiceResolver) ResolveEndpoint(namespace, name string, port int32) (*url.URL, error) {
	if r := l.set.Load(); r != nil {
		return (*r).ResolveEndpoint(namespace, name, port)
	}
	return defaultServiceResolver.ResolveEndpoint(namespace, name, port)
}

// SetServiceResolver sets how conversion webhooks' service references are
// resolved from now on (package server: to one of the Service's endpoints,
// as kube-apiserver with --enable-aggregator-routing).
func (s *Server) SetServiceResolver(r webhook.ServiceResolver) {
	s.services.set.Store(&r)
}

// NewEndpointServiceResolver resolves a service reference to one of the
// Service's ready endpoints, read from inf's Services and EndpointSlices
// (informers it registers; the caller starts them), and the
// kubernetes.default Service to self, as kube-apiserver resolves webhooks
// with --enable-aggregator-routing (kube-aggregator's resolvers; the
// admission webhooks' are the same). strata runs no kube-proxy, so
// kube-apiserver's default, the Service's cluster IP, would lead nowhere.
func NewEndpointServiceResolver(inf informers.SharedInformerFactory, self *url.URL) (webhook.ServiceResolver, error) {
	slices, err := proxy.NewEndpointSliceListerGetter(inf.Discovery().V1().EndpointSlices().Lister())
	if err != nil {
		return nil, fmt.Errorf("apiserver: endpoint slices: %w", err)
	}
	return aggregator.NewLoopbackServiceResolver(
		aggregator.NewEndpointServiceResolver(inf.Core().V1().Services().Lister(), slices), self), nil
}
