package admission

import (
	"context"

	"k8s.io/client-go/discovery"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/openapi"
)

// The MutatingAdmissionPolicy plugin polls /openapi/v3 from its start, to
// learn which OpenAPI documents changed. Answering that first poll marshals
// every built-in group's document to JSON for its hash: half a second of
// CPU, a fifth of an empty start on two cores (issue 18). kube-apiserver's
// plugins reach it over a loopback connection that answers only once it
// serves, so there the poll fails until then and runs again 5 s later;
// strata's loopback is in-process and answers at once. The plugins'
// client therefore waits for the server to serve before its first
// /openapi/v3 request, and the plugin learns the paths when kube-apiserver's
// would, or sooner.

// openAPIAfter is client, whose OpenAPI v3 requests wait until serving or
// stop is closed (nil serving: they do not wait).
func openAPIAfter(client kubernetes.Interface, serving, stop <-chan struct{}) kubernetes.Interface {
	if serving == nil {
		return client
	}
	return waitingClient{Interface: client, serving: serving, stop: stop}
}

type waitingClient struct {
	kubernetes.Interface
	serving, stop <-chan struct{}
}

func (c waitingClient) Discovery() discovery.DiscoveryInterfaces {
	return waitingDiscovery{DiscoveryInterfaces: c.Interface.Discovery(), serving: c.serving, stop: c.stop}
}

type waitingDiscovery struct {
	discovery.DiscoveryInterfaces
	serving, stop <-chan struct{}
}

func (d waitingDiscovery) OpenAPIV3() openapi.Client {
	return waitingOpenAPI{Client: d.DiscoveryInterfaces.OpenAPIV3(), serving: d.serving, stop: d.stop}
}

func (d waitingDiscovery) OpenAPIV3WithContext(ctx context.Context) openapi.ClientWithContext {
	return waitingOpenAPIWithContext{ClientWithContext: d.DiscoveryInterfaces.OpenAPIV3WithContext(ctx),
		serving: d.serving, stop: d.stop}
}

type waitingOpenAPI struct {
	openapi.Client
	serving, stop <-chan struct{}
}

func (o waitingOpenAPI) Paths() (map[string]openapi.GroupVersion, error) {
	select {
	case <-o.serving:
	case <-o.stop:
	}
	return o.Client.Paths()
}

type waitingOpenAPIWithContext struct {
	openapi.ClientWithContext
	serving, stop <-chan struct{}
}

func (o waitingOpenAPIWithContext) PathsWithContext(ctx context.Context) (map[string]openapi.GroupVersionWithContext, error) {
	select {
	case <-o.serving:
	case <-o.stop:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return o.ClientWithContext.PathsWithContext(ctx)
}
