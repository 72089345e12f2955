package server

import (
	"context"
	"fmt"
	"reflect"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/stratadev/strata/apiserver"
	"github.com/stratadev/strata/controllers"
	"github.com/stratadev/strata/internal/loopback"
)

// shared is what the server's own controllers run on, as kube-apiserver's
// post-start hooks and kcp's controllers do: one privileged in-process
// client and one set of shared informers over it, so that each resource is
// listed and watched once however many controllers follow it.
type shared struct {
	loop      *loopback.Loopback
	client    kubernetes.Interface
	informers informers.SharedInformerFactory
	stop      chan struct{}
}

func newShared(api *apiserver.Server) (*shared, error) {
	loop := loopback.New(api.Handler())
	client, err := kubernetes.NewForConfig(loop.Config())
	if err != nil {
		loop.Shutdown()
		return nil, fmt.Errorf("loopback client: %w", err)
	}
	// No periodic resync: the controllers strata runs requeue by themselves.
	// Cached objects without managed fields, as kube-controller-manager's.
	factory := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithTransform(controllers.TrimManagedFields))
	return &shared{loop: loop, client: client, informers: factory, stop: make(chan struct{})}, nil
}

// start runs the informers requested so far (each controller asks for its
// own before this).
func (s *shared) start() { s.informers.Start(s.stop) }

// startServing runs the informers requested so far, those that serving
// reads (the authorizer's, the authenticator's, the admission plugins'),
// and returns what waits until they have listed. The controllers' own
// informers, requested afterwards, are not waited for: kube-apiserver's
// readiness does not wait for kube-controller-manager's, and with many
// objects (the ConfigMaps the root CA publisher follows) their first list
// would add seconds to the start.
func (s *shared) startServing() (wait func(ctx context.Context) error) {
	s.informers.Start(s.stop)
	// The factory lists the informers it started only through
	// WaitForCacheSync: asked with a closed channel, it answers at once.
	now := make(chan struct{})
	close(now)
	var synced []cache.DoneChecker
	for typ := range s.informers.WaitForCacheSync(now) {
		obj, _ := reflect.New(typ.Elem()).Interface().(runtime.Object)
		// It exists: the nil constructor is not called.
		synced = append(synced, s.informers.InformerFor(obj, nil).HasSyncedChecker())
	}
	return func(ctx context.Context) error {
		if !cache.WaitFor(ctx, "", synced...) { // without polling
			return fmt.Errorf("the informers that serving reads have not listed: %w", ctx.Err())
		}
		return nil
	}
}

// close stops the informers and ends every loopback connection.
func (s *shared) close() {
	close(s.stop)
	s.informers.Shutdown()
	s.loop.Shutdown()
}
