package main

import "path/filepath"

// The data directory of strata server: its etcd data, certificates, admin
// token and the kubeconfig that reaches it.
const (
	dataDirEnv     = "STRATA_DATA_DIR"
	defaultDataDir = "strata-data"
	kubeconfigName = "kubeconfig"
)

// dataDir returns $STRATA_DATA_DIR, or ./strata-data when it is unset.
func dataDir(getenv func(string) string) string {
	if dir := getenv(dataDirEnv); dir != "" {
		return dir
	}
	return defaultDataDir
}

// serverKubeconfig is the kubeconfig strata server writes in its data
// directory.
func serverKubeconfig(getenv func(string) string) string {
	return filepath.Join(dataDir(getenv), kubeconfigName)
}
