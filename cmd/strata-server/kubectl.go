package main

import (
	"os"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/component-base/cli"
	"k8s.io/component-base/logs"
	kubectlcmd "k8s.io/kubectl/pkg/cmd"
	"k8s.io/kubectl/pkg/cmd/plugin"
	cmdutil "k8s.io/kubectl/pkg/cmd/util"

	// The client auth plugins (exec, OIDC) real kubectl has.
	_ "k8s.io/client-go/plugin/pkg/client/auth"
)

// How kubectl is told which kubeconfig to use.
const (
	kubeconfigEnv  = "KUBECONFIG"
	kubeconfigFlag = "--kubeconfig"
	endOfFlags     = "--" // after it, kubectl passes arguments on (exec, run)
)

func newKubectlCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "kubectl [KUBECTL FLAGS] COMMAND [ARGS]",
		Short: "Run kubectl against the strata server (kubectl v1.37.2, built in)",
		Long: `Run kubectl, built into strata: every argument and flag after "kubectl" is
kubectl's ("strata kubectl --help" prints kubectl's help), and its output and
exit status are kubectl's.

Unless the KUBECONFIG environment variable or a --kubeconfig flag names a
kubeconfig, strata kubectl uses the one strata server writes into its data
directory: $STRATA_DATA_DIR/kubeconfig, or ./strata-data/kubeconfig when
STRATA_DATA_DIR is unset.

The kubectl inside is k8s.io/kubectl v0.37.2, the code of kubectl v1.37.2,
and "strata kubectl version" says v1.37.2; its user agent is kubectl's
("kubectl/v1.37.2 (linux/amd64) kubernetes/unknown").`,
		Example: `  strata kubectl get namespaces
  strata kubectl apply -f deployment.yaml
  STRATA_DATA_DIR=/var/lib/strata strata kubectl get pods -A
  strata kubectl version --client`,
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if path, ok := defaultKubeconfig(args, os.Getenv); ok {
				if err := os.Setenv(kubeconfigEnv, path); err != nil {
					return err
				}
			}
			runKubectl(cmd, args)
			return nil
		},
	}
}

// defaultKubeconfig returns the kubeconfig of strata server when neither
// $KUBECONFIG nor a --kubeconfig flag (before a "--" that ends kubectl's
// flags) chooses one.
func defaultKubeconfig(args []string, getenv func(string) string) (string, bool) {
	if getenv(kubeconfigEnv) != "" {
		return "", false
	}
	for _, arg := range args {
		if arg == endOfFlags {
			break
		}
		if arg == kubeconfigFlag || strings.HasPrefix(arg, kubeconfigFlag+"=") {
			return "", false
		}
	}
	return serverKubeconfig(getenv), true
}

// runKubectl runs kubectl as its own main does (cmd/kubectl in
// k8s.io/kubernetes): plugins on $PATH, klog verbosity from the arguments,
// component-base's cli.RunNoErrOutput, and an error printed by
// cmdutil.CheckErr, which exits with kubectl's status, as kubectl's
// subcommands themselves do on most errors.
func runKubectl(cmd *cobra.Command, args []string) {
	versionKubectl()
	// client-go names the program in the user agent from os.Args[0], and
	// the API server records writes without a fieldManager under the user
	// agent's first word: kubectl's writes are "kubectl"'s, not the
	// binary's ("strata-server").
	os.Args[0] = "kubectl"
	argv := append([]string{"kubectl"}, args...)
	logs.GlogSetter(kubectlcmd.GetLogVerbosity(argv)) //nolint:errcheck // as kubectl's main
	streams := genericiooptions.IOStreams{In: cmd.InOrStdin(), Out: cmd.OutOrStdout(), ErrOut: cmd.ErrOrStderr()}
	kubectl := kubectlcmd.NewDefaultKubectlCommandWithArgs(kubectlcmd.KubectlOptions{
		PluginHandler: kubectlcmd.NewDefaultPluginHandler(plugin.ValidPluginFilenamePrefixes),
		Arguments:     argv,
		IOStreams:     streams,
	})
	kubectl.SetArgs(argv[1:]) // never nil: cobra would read os.Args
	kubectl.SetIn(streams.In)
	kubectl.SetOut(streams.Out)
	kubectl.SetErr(streams.ErrOut)
	if err := cli.RunNoErrOutput(kubectl); err != nil {
		cmdutil.CheckErr(err)
	}
}
