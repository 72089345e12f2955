package controllers

import (
	"context"
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/controller-manager/pkg/informerfactory"
	"k8s.io/kubernetes/pkg/controller/garbagecollector"
)

// GarbageCollectorSyncPeriod is how often the garbage collector looks at
// discovery for new resources (custom resources included) and the REST
// mapper forgets what it cached: kube-controller-manager's 30 s.
const GarbageCollectorSyncPeriod = 30 * time.Second

// gcWorkers is kube-controller-manager's default --concurrent-gc-syncs.
const gcWorkers = 20

// GarbageCollector is kube-controller-manager's garbage collector
// (k8s.io/kubernetes/pkg/controller/garbagecollector) running in process:
// it deletes objects whose owners are gone, deletes the dependents of an
// owner with the foregroundDeletion finalizer before removing it, and
// removes the ownerReferences of an owner with the orphan finalizer.
type GarbageCollector struct {
	cancel   context.CancelFunc
	done     sync.WaitGroup
	metadata metadatainformer.SharedInformerFactory
}

// StartGarbageCollector builds the collector as kube-controller-manager
// does (a metadata client and metadata informers over config, a deferred
// discovery REST mapper reset every sync period, upstream's default ignored
// resources) and runs it with its periodic discovery sync. typed is the
// shared informer factory the built-in resources are watched through; it
// must have been started, as kube-controller-manager starts its informers
// before it lets the collector start its own.
func StartGarbageCollector(client kubernetes.Interface, config *rest.Config, typed informers.SharedInformerFactory) (*GarbageCollector, error) {
	metadataClient, err := metadata.NewForConfig(config)
	if err != nil {
		return nil, fmt.Errorf("garbage collector: metadata client: %w", err)
	}
	// One discovery client for the mapper, another for Sync: upstream warns
	// that sharing them resets the mapper needlessly.
	mapperDiscovery, err := discovery.NewDiscoveryClientForConfig(config)
	if err != nil {
		return nil, fmt.Errorf("garbage collector: discovery client: %w", err)
	}
	syncDiscovery, err := discovery.NewDiscoveryClientForConfig(config)
	if err != nil {
		return nil, fmt.Errorf("garbage collector: discovery client: %w", err)
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(mapperDiscovery))
	ctx, cancel := context.WithCancel(context.Background())
	g := &GarbageCollector{cancel: cancel, metadata: metadatainformer.NewSharedInformerFactory(metadataClient, 0)}
	started := make(chan struct{})
	gc, err := garbagecollector.NewGarbageCollector(ctx, client, metadataClient, mapper,
		garbagecollector.DefaultIgnoredResources(), informerfactory.NewInformerFactory(typed, g.metadata), started)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("garbage collector: %w", err)
	}
	close(started)
	g.done.Go(func() { wait.Until(mapper.Reset, GarbageCollectorSyncPeriod, ctx.Done()) })
	g.done.Go(func() { gc.Run(ctx, gcWorkers, GarbageCollectorSyncPeriod) })
	g.done.Go(func() { gc.Sync(ctx, syncDiscovery, GarbageCollectorSyncPeriod) })
	return g, nil
}

// Stop ends the collector and its informers and waits for them; the
// client must still work until it returns.
func (g *GarbageCollector) Stop() {
	g.cancel()
	g.done.Wait()
	g.metadata.Shutdown()
}
