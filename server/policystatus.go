package server

import (
	"context"
	"log/slog"

	"github.com/stratadev/strata/controllers"
)

// startPolicyStatus runs kube-controller-manager's
// validatingadmissionpolicy-status-controller on the shared informers
// (called before sh.start) while this server leads the servers sharing
// its etcd (the controllers' Lease and identity: with the same identity
// it leads together with the other controllers). The returned stop ends
// it and gives up the lead, before the loopback closes.
func startPolicyStatus(o *Options, sh *shared, log *slog.Logger) (stop func()) {
	controllers.PolicyStatusInformers(sh.informers)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		controllers.RunAsLeader(ctx, sh.client, controllerIdentity(o), func(ctx context.Context) {
			if err := controllers.PolicyStatus(ctx, sh.client, sh.loop.Config(), sh.informers); err != nil {
				log.Error(controllers.PolicyStatusControllerName, "err", err)
			}
		})
	}()
	return func() {
		cancel()
		<-done
	}
}
