// Package apiserver is strata's Kubernetes-compatible HTTP edge: routing of
// the /api and /apis paths, discovery, health, content negotiation and
// encoding, and one handler per verb (get, list, watch, create, update,
// patch, delete and deletecollection, each in its own file). No kind's
// behaviour lives here: every handler decodes a request, calls one method
// of the resource's generic store (registry.Store: the rules every kind
// follows, and the stores of its subresources) and encodes the answer.
// The authentication.k8s.io and authorization.k8s.io reviews are answered
// by their upstream REST with Config's authorizer and token authenticator
// (review.go).
//
// Answers follow kube-apiserver: metav1.Status errors with its reasons and
// codes, lists and watch events as it encodes them (JSON, YAML or
// Kubernetes protobuf, negotiated as it negotiates), Table output for
// kubectl. Where kube-apiserver answers 5xx for a client's mistake (an
// inconsistent $setElementOrder, a non-integer resourceVersion on a get),
// strata answers 4xx.
//
// A Server is built from a Config (New) and serves through Handler; the
// command-line wiring (certificates, authentication, the embedded etcd)
// lives in package server.
package apiserver
