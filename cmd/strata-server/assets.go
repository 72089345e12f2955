package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
)

// assetNames are the programs envtest looks for in $KUBEBUILDER_ASSETS,
// each a link to strata-server, which runs as the program it is invoked as.
var assetNames = []string{"kube-apiserver", "etcd", "kubectl"}

func newEnvtestAssetsCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "envtest-assets DIR",
		Short: "Write envtest's asset directory: kube-apiserver, etcd and kubectl as links to strata-server",
		Long: `Write DIR (made if missing) with kube-apiserver, etcd and kubectl: symbolic links
to this strata-server, which runs as the program it is invoked as. Then

    KUBEBUILDER_ASSETS=DIR go test ./...

runs an envtest suite on strata (docs/testing.md).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			self, err := os.Executable()
			if err != nil {
				return fmt.Errorf("envtest-assets: finding strata-server: %w", err)
			}
			if self, err = filepath.EvalSymlinks(self); err != nil {
				return fmt.Errorf("envtest-assets: finding strata-server: %w", err)
			}
			if err := writeAssets(args[0], self); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "KUBEBUILDER_ASSETS=%s\n", args[0])
			return nil
		},
	}
}

// writeAssets links each of assetNames in dir to target, replacing what
// is there under those names.
func writeAssets(dir, target string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("envtest-assets: %w", err)
	}
	for _, name := range assetNames {
		link := filepath.Join(dir, name)
		if err := os.Remove(link); err != nil && !os.IsNotExist(err) {
			return fmt.Errorf("envtest-assets: replacing %s: %w", link, err)
		}
		if err := os.Symlink(target, link); err != nil {
			return fmt.Errorf("envtest-assets: %w", err)
		}
	}
	return nil
}
