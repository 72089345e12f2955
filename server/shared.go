package server

import (
	"fmt"

	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"

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

// close stops the informers and ends every loopback connection.
func (s *shared) close() {
	close(s.stop)
	s.informers.Shutdown()
	s.loop.Shutdown()
}
