package server

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/stratadev/strata/controllers"
)

// controllerOptions are the settings of the kube-controller-manager
// controllers strata runs.
type controllerOptions struct {
	// syncPeriod is how often the garbage collector and the quota
	// controller look for new resources (0: 30 s), quotaResync how often
	// every quota is recalculated (0: 5 min); tests shorten them.
	syncPeriod, quotaResync time.Duration
}

// startControllers runs the kube-controller-manager controllers
// --controllers selects (serviceaccount, root CA publisher, cluster-role
// aggregation, garbage collector, resource quota) on the shared informers
// while this server leads the servers sharing its etcd (called before
// sh.start, which starts the informers they follow, once the API is ready).
// The returned stop ends them and then gives up the lead, before the
// loopback closes.
func startControllers(o *Options, sh *shared, caPEM []byte, log *slog.Logger) (stop func()) {
	sel, _ := controllers.ParseSelection(o.Controllers) // checked by Validate
	for _, name := range sel.NotRun() {
		log.Info("controller not run: strata runs only the controllers a control plane without nodes needs",
			"controller", name, "run", controllers.Supported)
	}
	cfg := controllers.Config{Client: sh.client, Loopback: sh.loop.Config(), Informers: sh.informers,
		InformersStop: sh.stop, Selection: sel, RootCA: caPEM, SyncPeriod: o.controllers.syncPeriod,
		QuotaResyncPeriod: o.controllers.quotaResync, Log: log}
	controllers.RegisterInformers(cfg)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	identity := controllerIdentity(o)
	go func() {
		defer close(done)
		controllers.RunAsLeader(ctx, sh.client, identity, func(ctx context.Context) {
			log.Info("leading the servers sharing etcd: running the controllers", "lease", "kube-system/"+controllers.LeaseName, "identity", identity)
			controllers.Run(ctx, cfg)
			log.Info("stopped the controllers", "lease", "kube-system/"+controllers.LeaseName, "identity", identity)
		})
	}()
	return func() {
		cancel()
		<-done
	}
}

// controllerIdentity names this server in the controllers' Lease: the host
// and the data directory, the same across restarts.
func controllerIdentity(o *Options) string {
	host, _ := os.Hostname()
	dir, err := filepath.Abs(o.DataDir)
	if err != nil {
		dir = o.DataDir
	}
	return host + "_" + dir
}
