// Package satoken issues and checks service-account tokens as kube-apiserver
// does, with upstream's code: the TokenRequests of serviceaccounts/token
// through TokenREST (k8s.io/kubernetes/pkg/registry/core/serviceaccount/storage),
// tokens signed by JWTTokenGenerator and checked by JWTTokenAuthenticator
// with the validator that looks the account (and a bound pod, secret or
// node) up again (k8s.io/kubernetes/pkg/serviceaccount), and the issuer's
// OIDC discovery documents (k8s.io/kubernetes/pkg/routes). What is strata's
// own is only the wiring: the getters over a client of the API, and the
// storage shim that lets TokenREST read ServiceAccounts.
package satoken
