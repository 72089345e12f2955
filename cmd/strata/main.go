// Command strata is Kubernetes-style declarative configuration in one binary:
// strategic merge patches (patch, diff), package updates (pkg, merge3) and a
// Kubernetes-compatible API server on etcd (server, kubectl).
package main

import (
	"os"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
