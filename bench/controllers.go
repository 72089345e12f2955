package bench

import (
	"fmt"

	"github.com/stratadev/strata/controllers"
)

// The run starts kube-apiserver without kube-controller-manager, so by
// default the strata servers it starts run none of the
// kube-controller-manager controllers strata runs in its own process
// (--controllers): both sides then serve the API and nothing else. Three
// of those controllers follow every ConfigMap write (the garbage
// collector's and the quota controller's monitors, and the root CA
// publisher's ConfigMap informer), and their informers hold what they
// follow: tens of megabytes of strata's RSS on a loaded data directory
// (bench/README.md), memory kube-apiserver's figure leaves to another
// process.
// Config.StrataControllers ("*" for strata's default) measures strata as
// `strata server` runs.

// apiOnly is the --controllers selection that runs none of them.
func apiOnly() []string {
	out := make([]string, len(controllers.Supported))
	for i, name := range controllers.Supported {
		out[i] = "-" + name
	}
	return out
}

// strataControllers is the --controllers of every strata server the run
// starts.
func (c Config) strataControllers() []string {
	if c.StrataControllers != nil {
		return c.StrataControllers
	}
	return apiOnly()
}

// checkControllers refuses a selection strata-server would refuse.
func (c Config) checkControllers() error {
	if _, err := controllers.ParseSelection(c.strataControllers()); err != nil {
		return fmt.Errorf("strata controllers: %w", err)
	}
	return nil
}

// publishesRootCA reports whether the strata servers publish the
// kube-root-ca.crt ConfigMap in every namespace (a listed namespace then
// holds it too).
func (c Config) publishesRootCA() bool {
	sel, err := controllers.ParseSelection(c.strataControllers())
	return err == nil && sel.Enabled(controllers.RootCAPublisherName)
}
