// Package openapi serves the /openapi/v2 and /openapi/v3 documents of the
// kinds a strata server serves, as kube-apiserver serves them, so that
// kubectl (explain, server-side field validation, apply) and client-go's
// discovery work unchanged.
//
// Nothing in the documents is written by hand. Definitions are the generated
// ones (k8s.io/kubernetes/pkg/generated/openapi), named and given
// x-kubernetes-group-version-kind by k8s.io/apiserver's DefinitionNamer over a
// scheme. Paths and operations come from k8s.io/apiserver's own route
// installer, run over documentation-only storages (storage.go), so operation
// IDs (readAppsV1NamespacedDeployment), query parameters (dryRun,
// fieldManager, fieldValidation...), consumed patch types and the
// x-kubernetes-action extension are kube-apiserver's. kube-openapi's builders
// turn the routes into documents and its handlers serve them.
//
// /openapi/v2 is one document of everything; /openapi/v3 lists one document
// per group-version (api/v1, apis/apps/v1) plus the discovery documents api,
// apis and apis/{group}. Each document holds only the definitions reachable
// from its operations.
//
// New builds no document: each v3 document is built when first asked for
// or warmed (Warm, which a server runs once it is seen ready: the first
// /openapi/v3 request needs every document's hash), and /openapi/v2, about
// half a second for every built-in kind on a 2-core machine (most of it
// kube-openapi's v2 parameter de-duplication), when first asked for, as
// kube-apiserver builds its own. At run time SetGroupVersion
// replaces the documents of one group-version, with raw schemas for kinds the
// scheme does not know (custom resources): it rebuilds that group-version's
// v3 document at once (a few milliseconds) and the v2 document when it is
// next asked for.
package openapi
