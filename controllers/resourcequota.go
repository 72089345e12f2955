package controllers

import (
	"context"
	"time"

	"k8s.io/apiserver/pkg/quota/v1/generic"
	"k8s.io/client-go/discovery"
	"k8s.io/kubernetes/pkg/controller"
	"k8s.io/kubernetes/pkg/controller/resourcequota"
	quotainstall "k8s.io/kubernetes/pkg/quota/v1/install"
)

// kube-controller-manager's defaults: --resource-quota-sync-period (the
// full recalculation of every quota) and --concurrent-resource-quota-syncs.
const (
	quotaFullResync = 5 * time.Minute
	quotaWorkers    = 5
)

// startResourceQuota runs kube-controller-manager's
// resourcequota-controller (k8s.io/kubernetes/pkg/controller/resourcequota)
// until ctx ends: it keeps each ResourceQuota's status.hard its spec's and
// status.used what its namespace holds. It is built as
// kube-controller-manager builds it: the controllers' quota configuration
// (pods, services and persistentvolumeclaims with their evaluators;
// every other namespaced resource discovery lists, custom ones included,
// counted as count/<resource>.<group>, as are configmaps and secrets
// under their legacy names), monitors on the term's typed-or-metadata
// informers, and discovery looked at every sync period for new
// resources.
func startResourceQuota(ctx context.Context, t *term) error {
	fullResync := quotaFullResync
	if t.cfg.QuotaResyncPeriod > 0 {
		fullResync = t.cfg.QuotaResyncPeriod
	}
	disc, err := discovery.NewDiscoveryClientForConfig(t.cfg.Loopback)
	if err != nil {
		return errorf(ResourceQuotaName, err)
	}
	discoveryFunc := disc.ServerPreferredNamespacedResources
	// Usage is counted from the monitors' own informers (termFactory).
	listers := generic.ListerFuncForResourceFunc(t.factory.ForResource)
	config, err := quotainstall.NewQuotaConfigurationForControllers(listers, t.cfg.Informers)
	if err != nil {
		return errorf(ResourceQuotaName, err)
	}
	// The shared informers never resync (the server makes them without a
	// resync period), so the monitors ask for none: kube-controller-
	// manager's replenishment resync only redelivers unchanged objects,
	// which the update filter drops. The full recalculation (fullResync)
	// is the quota controller's own timer.
	rq, err := resourcequota.NewController(ctx, &resourcequota.ControllerOptions{
		QuotaClient:               t.cfg.Client.CoreV1(),
		ResourceQuotaInformer:     t.cfg.Informers.Core().V1().ResourceQuotas(),
		ResyncPeriod:              controller.StaticResyncPeriodFunc(fullResync),
		InformerFactory:           t.factory,
		ReplenishmentResyncPeriod: controller.NoResyncPeriodFunc, // see below
		DiscoveryFunc:             discoveryFunc,
		IgnoredResourcesFunc:      config.IgnoredResources,
		InformersStarted:          t.started,
		Registry:                  generic.NewRegistry(config.Evaluators()),
		UpdateFilter:              quotainstall.DefaultUpdateFilter(),
	})
	if err != nil {
		return errorf(ResourceQuotaName, err)
	}
	period := t.cfg.syncPeriod()
	t.goRun(func() { rq.Run(ctx, quotaWorkers) })
	t.goRun(func() { rq.Sync(ctx, discoveryFunc, period) })
	return nil
}
