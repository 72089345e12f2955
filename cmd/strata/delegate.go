package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"

	"github.com/spf13/cobra"
)

// serverProgram runs "strata server" and "strata kubectl". They link all of
// Kubernetes (kube-apiserver's packages, etcd, kubectl, client-go), whose
// package initialisers alone cost many times an offline command's own
// time and memory ("strata-bench commands" measures them); the offline
// commands (patch, diff, merge3, pkg) would pay that on every run if strata
// linked them too. So strata is small, and hands these two commands to
// strata-server, built beside it (go build -o DIR ./cmd/...; go install
// .../cmd/...@latest). internal/layering's TestStrataCommandIsLean keeps
// the heavy packages out of strata.
const serverProgram = "strata-server"

// buildHint tells how to get strata-server, for the error when it is missing.
const buildHint = `build it beside strata with "go build -o DIR ./cmd/..." in a strata checkout (DIR holding strata), or install both with "go install github.com/stratadev/strata/cmd/...@latest"`

func newServerCommand() *cobra.Command {
	return delegated("server", "Run a Kubernetes-compatible API server on an embedded (or external) etcd",
		nil, []string{"--help"})
}

func newKubectlCommand() *cobra.Command {
	return delegated("kubectl", "Run kubectl against the strata server (kubectl built in)",
		[]string{"kubectl"}, []string{"help", "kubectl"})
}

func newEnvtestAssetsCommand() *cobra.Command {
	return delegated("envtest-assets", "Write envtest's asset directory: kube-apiserver, etcd and kubectl as links to strata-server",
		[]string{"envtest-assets"}, []string{"envtest-assets", "--help"})
}

// delegated is a command that strata-server runs: "strata NAME ARGS" runs
// "strata-server PREFIX ARGS", and "strata help NAME" runs "strata-server
// HELP". Every argument and flag goes through unparsed.
func delegated(name, short string, prefix, help []string) *cobra.Command {
	cmd := &cobra.Command{
		Use:                name,
		Short:              short,
		Long:               short + ".\n\nRun by " + serverProgram + ", which strata looks for beside itself, then on $PATH.",
		DisableFlagParsing: true,
		RunE: func(_ *cobra.Command, args []string) error {
			return runServerProgram(append(append([]string{}, prefix...), args...))
		},
	}
	cmd.SetHelpFunc(func(c *cobra.Command, _ []string) {
		if err := runServerProgram(help); err != nil {
			fmt.Fprintf(c.ErrOrStderr(), "error: %v\n", err)
			os.Exit(exitRejected)
		}
	})
	return cmd
}

// runServerProgram replaces this process by strata-server with args (on
// Windows, runs it and exits with its status). It returns only on error.
func runServerProgram(args []string) error {
	exe, exeErr := os.Executable()
	path, err := findServerProgram(exe, exeErr, exec.LookPath)
	if err != nil {
		return err
	}
	return execProgram(path, args)
}

// findServerProgram looks for strata-server beside the strata executable
// exe (beside the file a symbolic link leads to, then beside the link), then
// on $PATH through lookPath.
func findServerProgram(exe string, exeErr error, lookPath func(string) (string, error)) (string, error) {
	name := serverProgram
	if runtime.GOOS == "windows" {
		name += ".exe"
	}
	var dirs []string
	if exeErr == nil {
		if resolved, err := filepath.EvalSymlinks(exe); err == nil {
			dirs = append(dirs, filepath.Dir(resolved))
		}
		dirs = append(dirs, filepath.Dir(exe))
	}
	for _, dir := range dirs {
		candidate := filepath.Join(dir, name)
		if fi, err := os.Stat(candidate); err == nil && fi.Mode().IsRegular() {
			return candidate, nil
		}
	}
	if path, err := lookPath(serverProgram); err == nil {
		return path, nil
	} else if !errors.Is(err, exec.ErrNotFound) {
		return "", fmt.Errorf("looking for %s on $PATH: %w", serverProgram, err)
	}
	where := "on $PATH"
	if len(dirs) > 0 {
		where = "in " + dirs[len(dirs)-1] + " (beside strata) nor on $PATH"
	}
	return "", fmt.Errorf("%s is not installed: no %s %s; %s", serverProgram, name, where, buildHint)
}
