package controllers

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/restmapper"
	"k8s.io/kubernetes/pkg/controller/garbagecollector"
)

// GarbageCollectorSyncPeriod is how often, unless Config.SyncPeriod says
// otherwise, the garbage collector and the quota controller look at
// discovery for new resources (custom resources included) and the REST
// mapper forgets what it cached: kube-controller-manager's 30 s.
const GarbageCollectorSyncPeriod = 30 * time.Second

// gcWorkers is kube-controller-manager's default --concurrent-gc-syncs.
const gcWorkers = 20

// startGarbageCollector runs kube-controller-manager's garbage collector
// (k8s.io/kubernetes/pkg/controller/garbagecollector) until ctx ends: it
// deletes objects whose owners are gone, deletes the dependents of an
// owner with the foregroundDeletion finalizer before removing it, and
// removes the ownerReferences of an owner with the orphan finalizer. It
// is built as kube-controller-manager builds it (a metadata client over
// the loopback, the term's typed-or-metadata informers, a deferred
// discovery REST mapper reset every sync period, upstream's default
// ignored resources) and runs with its periodic discovery sync.
func startGarbageCollector(ctx context.Context, t *term) error {
	config := t.cfg.Loopback
	metadataClient, err := metadata.NewForConfig(config)
	if err != nil {
		return errorf(GarbageCollectorName, err)
	}
	// One discovery client for the mapper, another for Sync: upstream warns
	// that sharing them resets the mapper needlessly.
	mapperDiscovery, err := discovery.NewDiscoveryClientForConfig(config)
	if err != nil {
		return errorf(GarbageCollectorName, err)
	}
	syncDiscovery, err := discovery.NewDiscoveryClientForConfig(config)
	if err != nil {
		return errorf(GarbageCollectorName, err)
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(mapperDiscovery))
	gc, err := garbagecollector.NewGarbageCollector(ctx, t.cfg.Client, metadataClient, mapper,
		garbagecollector.DefaultIgnoredResources(), t.factory, t.started)
	if err != nil {
		return errorf(GarbageCollectorName, err)
	}
	period := t.cfg.syncPeriod()
	t.goRun(func() { wait.Until(mapper.Reset, period, ctx.Done()) })
	t.goRun(func() { gc.Run(ctx, gcWorkers, period) })
	t.goRun(func() { gc.Sync(ctx, syncDiscovery, period) })
	return nil
}
