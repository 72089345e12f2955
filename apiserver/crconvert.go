package apiserver

import (
	"net/url"
	"sync/atomic"

	"k8s.io/apiserver/pkg/util/webhook"
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
