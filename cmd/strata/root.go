package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
)

// Exit statuses of every strata command (DESIGN.md, "Command line contract").
const (
	exitOK       = 0
	exitRejected = 1 // the input or patch was rejected
	exitUsage    = 2 // the command line itself is wrong
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

// usageError marks an error as a command-line mistake (exit status 2).
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func usagef(format string, args ...any) error {
	return usageError{fmt.Errorf(format, args...)}
}

// run executes the strata command line and returns its exit status.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	root := newRootCommand(stdin, stdout, stderr)
	root.SetArgs(args)
	err := root.Execute()
	if err == nil {
		return exitOK
	}
	fmt.Fprintf(stderr, "error: %v\n", err)
	var ue usageError
	if errors.As(err, &ue) || isCobraUsageError(err) {
		return exitUsage
	}
	return exitRejected
}

// isCobraUsageError recognises the command-line errors cobra reports without
// a type of their own: an unknown command, or the wrong number of arguments.
func isCobraUsageError(err error) bool {
	msg := err.Error()
	for _, prefix := range []string{"unknown command ", "accepts ", "requires at least ", "requires at most "} {
		if strings.HasPrefix(msg, prefix) {
			return true
		}
	}
	return false
}

func newRootCommand(stdin io.Reader, stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:           "strata",
		Short:         "Kubernetes-style declarative configuration: patches, packages and an API server",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	// Flag parsing errors are usage errors.
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	root.AddCommand(newVersionCommand(), newPatchCommand(), newDiffCommand(), newMerge3Command(), newPkgCommand(), newKubectlCommand(), newServerCommand())
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
