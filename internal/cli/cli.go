// Package cli is the command-line contract the strata binaries share (exit
// statuses, usage errors, how an error is printed), so that strata and
// strata-server answer alike.
package cli

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
)

// Exit statuses of every strata command (DESIGN.md, "Command line contract").
const (
	ExitOK       = 0
	ExitRejected = 1 // the input or patch was rejected
	ExitUsage    = 2 // the command line itself is wrong
)

// UsageError marks an error as a command-line mistake (exit status 2).
type UsageError struct{ Err error }

func (e UsageError) Error() string { return e.Err.Error() }
func (e UsageError) Unwrap() error { return e.Err }

// Usagef formats a UsageError.
func Usagef(format string, args ...any) error {
	return UsageError{fmt.Errorf(format, args...)}
}

// NewRoot returns a root command with the contract's settings: errors
// printed once by Run, flag errors as usage errors.
func NewRoot(use, short string, stdin io.Reader, stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{Use: use, Short: short, SilenceUsage: true, SilenceErrors: true}
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return UsageError{err} })
	return root
}

// Run executes root with args and returns its exit status, printing an
// error as "error: ..." on stderr.
func Run(root *cobra.Command, args []string, stderr io.Writer) int {
	root.SetArgs(args)
	err := root.Execute()
	if err == nil {
		return ExitOK
	}
	fmt.Fprintf(stderr, "error: %v\n", err)
	var ue UsageError
	if errors.As(err, &ue) || isCobraUsageError(err) {
		return ExitUsage
	}
	return ExitRejected
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
