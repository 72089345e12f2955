// Package storage is strata's versioned object store on etcd.
//
// A Store holds the objects of one resource type (pods, widgets.example.com,
// ...) as JSON under keys /registry/{group}/{resource}/{namespace}/{name} (core
// group: /registry/{resource}/...; cluster-scoped resources have no namespace
// segment). metadata.resourceVersion is the etcd modification revision of the
// object; a list's resourceVersion is the revision it was read at. Objects are
// unstructured.Unstructured values so built-in kinds and custom resources are
// stored alike.
//
// Reads follow the resourceVersion semantics of Kubernetes' "API
// Concepts" (https://kubernetes.io/docs/reference/using-api/api-concepts/#resource-versions):
// an unset resourceVersion is a quorum read from
// etcd; "0" and not-older-than reads are served by the per-type watch cache
// (cache.go) without touching etcd; exact reads and continue tokens read etcd at
// a revision, so every page of a paginated list is a snapshot of the first
// page's revision. Watches start from the cache's history, which is bounded
// in events and in stored bytes (ring.go): a watch from before it is 410.
//
// An object whose stored bytes do not decode fails every read with
// ErrCorrupt, as kube-apiserver's reads do; DeleteCorrupt removes it
// (corrupt.go). SpaceGuard reports etcd's NOSPACE alarm and recovers from it
// by compaction and defragmentation (space.go).
//
// Errors are *Error values. Each carries the apimachinery Status an HTTP
// layer should write (it implements apierrors.APIStatus, and errors.As to
// *apierrors.StatusError works), and matches one of the package sentinels
// (ErrNotFound, ErrExpired, ...) with errors.Is. See errors.go.
//
// Objects returned by List, Watch and the RV=0 paths may be shared with the
// watch cache: treat them as read-only and DeepCopy before changing them.
package storage
