package server

import (
	"context"
	"log/slog"

	"github.com/stratadev/strata/controllers"
)

// policyStatus requests the informer of kube-controller-manager's
// validatingadmissionpolicy-status-controller (call it before sh.start)
// and returns what starts the controller, for the controllers' leader
// callback: it runs while this server leads, under the same Lease
// election as the other controllers (a second election of the same Lease
// would race the first one's create and delay it).
func policyStatus(sh *shared, log *slog.Logger) func(context.Context) {
	controllers.PolicyStatusInformers(sh.informers)
	return func(ctx context.Context) {
		if err := controllers.PolicyStatus(ctx, sh.client, sh.loop.Config(), sh.informers); err != nil {
			log.Error(controllers.PolicyStatusControllerName, "err", err)
		}
	}
}
