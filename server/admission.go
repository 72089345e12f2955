package server

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/runtime"
	upstreamadmission "k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/util/webhook"
	"k8s.io/client-go/rest"

	"github.com/stratadev/strata/admission"
	"github.com/stratadev/strata/registry"
)

// lateAdmission is the admission chain, handed to the API before it
// exists: the plugins are built on the shared informers, which read the
// API. Until it is set (the server's own writes before it serves) writes
// are admitted as they are.
type lateAdmission struct {
	c atomic.Pointer[admission.Chain]
}

func (l *lateAdmission) Admit(ctx context.Context, op upstreamadmission.Operation, req *registry.AdmissionRequest, obj, old runtime.Object) error {
	if c := l.c.Load(); c != nil {
		return c.Admit(ctx, op, req, obj, old)
	}
	return nil
}

func (l *lateAdmission) Validate(ctx context.Context, op upstreamadmission.Operation, req *registry.AdmissionRequest, obj, old runtime.Object) error {
	if c := l.c.Load(); c != nil {
		return c.Validate(ctx, op, req, obj, old)
	}
	return nil
}

// newAdmission builds the chain on the shared informers (before they
// start, so that the plugins' informers are among them); addr is where
// the server listens (kubernetes.default.svc for webhooks); openAPIWarm
// closes once its OpenAPI v3 documents are warm (admission.Deps.OpenAPIWarm).
func newAdmission(o *Options, sh *shared, az *authorization, addr net.Addr, openAPIWarm <-chan struct{}) (*admission.Chain, error) {
	self := &url.URL{Scheme: "https", Host: dialAddress(addr)}
	chain, err := admission.New(o.Admission, admission.Deps{
		Loopback: sh.loop.Config(), Client: sh.client, Informers: sh.informers, Authorizer: &az.late,
		ServerID: controllerIdentity(o), Self: self, Stop: sh.stop, OpenAPIWarm: openAPIWarm, Dial: o.webhookDial,
	}, registry.Builtin())
	if err != nil {
		return nil, fmt.Errorf("admission: %w", err)
	}
	return chain, nil
}

// serviceDial makes the webhook clients of service references dial with
// dial, as kube-apiserver's proxy transport does for its webhooks; nil
// wraps nothing.
func serviceDial(dial func(ctx context.Context, network, addr string) (net.Conn, error)) webhook.AuthenticationInfoResolverWrapper {
	if dial == nil {
		return nil
	}
	return func(r webhook.AuthenticationInfoResolver) webhook.AuthenticationInfoResolver {
		return &webhook.AuthenticationInfoResolverDelegator{
			ClientConfigForFunc: r.ClientConfigFor,
			ClientConfigForServiceFunc: func(name, namespace string, port int) (*rest.Config, error) {
				cfg, err := r.ClientConfigForService(name, namespace, port)
				if cfg != nil {
					cfg.Dial = dial
				}
				return cfg, err
			},
		}
	}
}
