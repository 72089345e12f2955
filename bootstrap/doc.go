// Package bootstrap runs what kube-apiserver starts inside itself for a
// cluster to work: the `kubernetes` Service in `default`, with its
// Endpoints and EndpointSlice pointing at the server, created and kept as
// kube-apiserver's bootstrap controller
// (k8s.io/kubernetes/pkg/controlplane/controller/kubernetesservice) does,
// by running that controller through an in-process loopback client; and
// the default ServiceCIDR `kubernetes`, by kube-apiserver's
// defaultservicecidr controller the same way; and the kube-system
// ConfigMaps of delegated authentication and legacy token tracking, by
// kube-apiserver's clusterauthenticationtrust and legacytokentracking
// controllers (AuthenticationInfo).
package bootstrap
