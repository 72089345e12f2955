// Package registry knows which resource types strata serves and how an
// object of each becomes a stored object: strict decoding of its k8s.io/api
// type, kube-apiserver's defaulting, its validation and its create/update
// strategies (k8s.io/kubernetes/pkg/registry/...), and its Table columns
// (k8s.io/kubernetes/pkg/printers). None of those rules is written here: this
// package only wires the upstream functions to unstructured objects, which
// is what strata's storage keeps. The reviews (reviews.go) are kinds too,
// created and never stored: upstream's REST answers them. A Kind also says
// which garbage-collector finalizers a delete sets (gcfinalizers.go).
//
// Store (store.go) is the generic store of one resource, in the role of
// k8s.io/apiserver's registry/generic Store: the verbs over package
// storage with the rules every kind follows (preparation, admission, dry
// run, finalizers and deletion propagation, the namespace rules in
// namespaces.go) and the stores of the resource's subresources
// (store_subresources.go: eviction, binding, token, scale, the kubelet
// connecters). The HTTP layer (package apiserver) decodes a request and
// calls one method of a Store; what comes back is the stored object, or an
// apierrors status error (400 for a body that is not the kind's type, 422
// Invalid with kube-apiserver's field paths and causes).
package registry
