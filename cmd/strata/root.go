package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/stratadev/strata/internal/cli"
)

// Exit statuses of every strata command (DESIGN.md, "Command line contract").
const (
	exitOK       = cli.ExitOK
	exitRejected = cli.ExitRejected
	exitUsage    = cli.ExitUsage
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

// usageError marks an error as a command-line mistake (exit status 2).
type usageError = cli.UsageError

func usagef(format string, args ...any) error { return cli.Usagef(format, args...) }

// run executes the strata command line and returns its exit status.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return cli.Run(newRootCommand(stdin, stdout, stderr), args, stderr)
}

func newRootCommand(stdin io.Reader, stdout, stderr io.Writer) *cobra.Command {
	root := cli.NewRoot("strata", "Kubernetes-style declarative configuration: patches, packages and an API server", stdin, stdout, stderr)
	root.AddCommand(newVersionCommand(), newPatchCommand(), newDiffCommand(), newMerge3Command(), newPkgCommand(),
		newServerCommand(), newKubectlCommand(), newEnvtestAssetsCommand())
	return root
}

func newVersionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the strata version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fmt.Fprintf(cmd.OutOrStdout(), "strata %s\n", version)
			return nil
		},
	}
}
