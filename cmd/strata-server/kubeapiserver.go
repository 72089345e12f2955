package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/kubernetes/pkg/capabilities"

	"github.com/stratadev/strata/internal/cli"
	"github.com/stratadev/strata/server"
)

// controllersEnv selects, as --controllers does, the controllers
// strata-server runs as kube-apiserver: envtest starts kube-apiserver
// with its own flags, and an environment variable reaches it unchanged.
const controllersEnv = "STRATA_CONTROLLERS"

// kube-apiserver's files in --cert-dir: its serving certificate and key,
// which it generates there when they are missing (envtest writes them).
const (
	certDirCert = "apiserver.crt"
	certDirKey  = "apiserver.key"
)

// newKubeAPIServerCommand is strata-server invoked as kube-apiserver, as
// envtest invokes it: kube-apiserver's flags (those strata serves, and
// the others per kubeAPIServerFlags), and kube-apiserver's behaviour
// alone: no kube-controller-manager controllers unless --controllers or
// $STRATA_CONTROLLERS asks for them, so that namespaces hold no default
// ServiceAccount and no kube-root-ca.crt.
func newKubeAPIServerCommand(getenv func(string) string) *cobra.Command {
	o := server.NewOptions()
	o.Controllers = []string{}
	if env := getenv(controllersEnv); env != "" {
		o.Controllers = strings.Split(env, ",")
	}
	var logLevel, certDir string
	var allowPrivileged bool
	cmd := &cobra.Command{
		Use:   "kube-apiserver",
		Short: "strata server, taking kube-apiserver's flags (as envtest's kube-apiserver)",
		Long: `strata-server invoked as kube-apiserver: strata's API server, started with
kube-apiserver's flags, as controller-runtime's envtest starts kube-apiserver.
It runs no kube-controller-manager controllers unless --controllers or $` + controllersEnv + `
names them (e.g. garbage-collector-controller). kube-apiserver flags strata does
not serve are refused, or accepted with a warning where they cannot change
what a client sees (docs/testing.md lists them).`,
		Args:          cobra.NoArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkKubeAPIServerFlags(cmd.Flags(), cmd.ErrOrStderr()); err != nil {
				return err
			}
			cleanup, err := useCertDir(o, certDir, cmd.Flags().Changed("data-dir"))
			if err != nil {
				return err
			}
			defer cleanup()
			// kube-apiserver's capabilities.Setup: whether Pods may run
			// privileged containers (validation reads it process-wide).
			capabilities.Setup(allowPrivileged, 0)
			return runServer(cmd, o, logLevel)
		},
	}
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		return cli.UsageError{Err: fmt.Errorf("%w (strata's kube-apiserver does not offer it: docs/testing.md lists the flags it takes)", err)}
	})
	f := cmd.Flags()
	serverFlags(f, o, &logLevel)
	f.StringVar(&certDir, "cert-dir", "", "directory of the serving certificate (apiserver.crt, apiserver.key: used when both exist) and of strata's own files (credentials, kubeconfig); default a temporary directory removed at exit")
	f.BoolVar(&allowPrivileged, "allow-privileged", false, "allow Pods with privileged containers")
	addKubeAPIServerFlags(f)
	return cmd
}

// useCertDir makes --cert-dir the data directory (strata keeps its
// credentials and kubeconfig there; kube-apiserver keeps its generated
// certificate there), unless strata's --data-dir was given (dataDirGiven),
// and serves its apiserver.crt and apiserver.key when both exist. Without
// either directory, a temporary one serves, removed by the returned
// cleanup.
func useCertDir(o *server.Options, certDir string, dataDirGiven bool) (cleanup func(), err error) {
	cleanup = func() {}
	switch {
	case dataDirGiven:
	case certDir != "":
		o.DataDir = certDir
	default:
		if o.DataDir, err = os.MkdirTemp("", "strata-kube-apiserver-"); err != nil {
			return nil, fmt.Errorf("--cert-dir: %w", err)
		}
		dir := o.DataDir
		cleanup = func() { os.RemoveAll(dir) }
	}
	cert, key := filepath.Join(certDir, certDirCert), filepath.Join(certDir, certDirKey)
	if certDir != "" && o.TLSCertFile == "" && fileExists(cert) && fileExists(key) {
		o.TLSCertFile, o.TLSPrivateKeyFile = cert, key
	}
	return cleanup, nil
}

func fileExists(name string) bool {
	_, err := os.Stat(name)
	return err == nil
}

// errRefused marks a kube-apiserver flag strata refuses.
var errRefused = errors.New("refused")
