// Command strata-server runs the programs of strata that link all of
// Kubernetes: the API server (strata server) and kubectl (strata kubectl).
// The strata command hands those two commands to it, so that its offline
// commands start in milliseconds; build both with "go build -o DIR ./cmd/...".
//
//	strata-server [FLAGS]          is  strata server [FLAGS]
//	strata-server kubectl ARGS     is  strata kubectl ARGS
package main

import (
	"os"

	"github.com/stratadev/strata/internal/cli"
	_ "github.com/stratadev/strata/internal/kubectltext" // before kubectl's packages
)

func main() {
	root := newServerCommand()
	root.SetIn(os.Stdin)
	root.SetOut(os.Stdout)
	root.SetErr(os.Stderr)
	os.Exit(cli.Run(root, os.Args[1:], os.Stderr))
}
