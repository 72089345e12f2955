package admission

import (
	"context"

	"k8s.io/client-go/discovery"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/openapi"
)

// The MutatingAdmissionPolicy plugin polls /openapi/v3 from its start, to
// learn which OpenAPI documents changed. The answer names every document
// with the hash of its JSON, so the first poll builds and encodes them all:
// a noticeable share of a start's CPU, which kube-openapi's handler spreads
// over every core. kube-apiserver's plugins reach it over a loopback connection
// that is answered only once it serves; strata's loopback is in-process and
// answers at once, in the middle of the start. The plugins' client
// therefore waits, before its /openapi/v3 requests, for the server to have
// warmed the documents, which it does on one goroutine once a client has
// seen it ready (or a second after it serves).

// openAPIAfter is client, whose OpenAPI v3 requests wait until warm or stop
// is closed (nil warm: they do not wait).
func openAPIAfter(client kubernetes.Interface, warm, stop <-chan struct{}) kubernetes.Interface {
	if warm == nil {
		return client
	}
	return waitingClient{Interface: client, gate: gate{warm: warm, stop: stop}}
}

// gate is closed once warm or stop is.
type gate struct{ warm, stop <-chan struct{} }

// untilStop is a context cancelled once stop is closed.
func (g gate) untilStop() (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.Background())
	if g.stop != nil {
		go func() {
			select {
			case <-g.stop:
				cancel()
			case <-ctx.Done():
			}
		}()
	}
	return ctx, cancel
}

func (g gate) wait(ctx context.Context) error {
	select {
	case <-g.warm:
	case <-g.stop:
	case <-ctx.Done():
		return ctx.Err()
	}
	return nil
}

type waitingClient struct {
	kubernetes.Interface
	gate gate
}

func (c waitingClient) Discovery() discovery.DiscoveryInterfaces {
	return waitingDiscovery{DiscoveryInterfaces: c.Interface.Discovery(), gate: c.gate}
}

type waitingDiscovery struct {
	discovery.DiscoveryInterfaces
	gate gate
}

func (d waitingDiscovery) OpenAPIV3() openapi.Client {
	return waitingOpenAPI{Client: d.DiscoveryInterfaces.OpenAPIV3(), gate: d.gate}
}

func (d waitingDiscovery) OpenAPIV3WithContext(ctx context.Context) openapi.ClientWithContext {
	return waitingOpenAPIWithContext{ClientWithContext: d.DiscoveryInterfaces.OpenAPIV3WithContext(ctx), gate: d.gate}
}

type waitingOpenAPI struct {
	openapi.Client
	gate gate
}

// Paths asks for /openapi/v3 once the documents are warm, and is cancelled
// when the server stops: the MutatingAdmissionPolicy plugin asks without a
// context, and client-go retries the requests a stopping server answers
// with Retry-After for ten seconds, long after the server of a test in the
// same process has stopped.
func (o waitingOpenAPI) Paths() (map[string]openapi.GroupVersion, error) {
	ctx, cancel := o.gate.untilStop()
	defer cancel()
	c, ok := o.Client.(pathsWithContext)
	if !ok {
		_ = o.gate.wait(ctx)
		return o.Client.Paths()
	}
	if err := o.gate.wait(ctx); err != nil {
		return nil, err
	}
	withContext, err := c.PathsWithContext(ctx)
	// As client-go's Paths converts them: its documents implement both.
	paths := make(map[string]openapi.GroupVersion, len(withContext))
	for p, gv := range withContext {
		if gv, ok := gv.(openapi.GroupVersion); ok {
			paths[p] = gv
		}
	}
	return paths, err
}

// pathsWithContext is client-go's OpenAPI v3 client.
type pathsWithContext interface {
	PathsWithContext(ctx context.Context) (map[string]openapi.GroupVersionWithContext, error)
}

type waitingOpenAPIWithContext struct {
	openapi.ClientWithContext
	gate gate
}

func (o waitingOpenAPIWithContext) PathsWithContext(ctx context.Context) (map[string]openapi.GroupVersionWithContext, error) {
	if err := o.gate.wait(ctx); err != nil {
		return nil, err
	}
	return o.ClientWithContext.PathsWithContext(ctx)
}
