// Command strata-server runs the programs of strata that link all of
// Kubernetes: the API server (strata server) and kubectl (strata kubectl).
// The strata command hands those two commands to it, so that its offline
// commands start in milliseconds; build both with "go build -o DIR ./cmd/...".
//
//	strata-server [FLAGS]              is  strata server [FLAGS]
//	strata-server kubectl ARGS         is  strata kubectl ARGS
//	strata-server envtest-assets DIR   writes envtest's assets: links to strata-server
//
// Invoked as kube-apiserver, etcd or kubectl (a link of that name, as
// envtest-assets writes), it runs as that program: strata's API server
// with kube-apiserver's flags, etcd, or kubectl.
package main

import (
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/stratadev/strata/internal/cli"
	_ "github.com/stratadev/strata/internal/kubectltext" // before kubectl's packages
)

func main() {
	root := rootFor(filepath.Base(os.Args[0]))
	if root == nil {
		runEtcd(os.Args[1:]) // exits
		return
	}
	root.SetIn(os.Stdin)
	root.SetOut(os.Stdout)
	root.SetErr(os.Stderr)
	os.Exit(cli.Run(root, os.Args[1:], os.Stderr))
}

// rootFor is the command strata-server runs when invoked by name: nil for
// etcd, which runs etcd's own command.
func rootFor(name string) *cobra.Command {
	switch name {
	case "kube-apiserver":
		return newKubeAPIServerCommand(os.Getenv)
	case "etcd":
		return nil
	case "kubectl":
		return newKubectlCommand()
	}
	root := newServerCommand()
	root.AddCommand(newEnvtestAssetsCommand())
	return root
}
