// Package server runs strata's API server as a program: the data
// directory, the embedded (or an external) etcd, first-start credentials
// and the kubeconfig, authentication, TLS, compaction and graceful
// shutdown around package apiserver. Options are what the user says
// (flags); Run does the rest.
package server
