// Package fieldmanager is server-side apply and managedFields for strata's
// served kinds. It runs the upstream field manager (k8s.io/apimachinery's
// managedfields over sigs.k8s.io/structured-merge-diff) exactly as
// kube-apiserver composes it, with kube-apiserver's type models: the
// generated OpenAPI definitions for built-in kinds and a CRD's structural
// schemas for custom ones. What is strata's own is small: building the
// models once, decoding applied configurations, and wording errors that
// kube-apiserver answers with 500 as the client mistakes they are (400).
//
// The contract: a Manager per kind and subresource; Update records the
// fields a non-apply write changed (create, update, every patch type),
// Apply merges an applied configuration into the live object. Both return
// objects in the kind's served version, ready for the kind's strategy.
package fieldmanager
