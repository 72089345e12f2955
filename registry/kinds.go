package registry

import (
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/registry/rest"
)

// Strategy is what kube-apiserver's registry strategies implement: create
// and update preparation and validation for one kind.
type Strategy interface {
	rest.RESTCreateStrategy
	rest.RESTUpdateStrategy
}

// Kind is one served resource type.
type Kind struct {
	// GVK is the served (and stored) version of the kind.
	GVK schema.GroupVersionKind
	// Resource is the plural resource name, SingularName the singular.
	Resource, SingularName string
	// Namespaced says whether objects live in namespaces.
	Namespaced bool
	// ShortNames and Categories appear in discovery (kubectl get po, get all).
	ShortNames, Categories []string

	strategy Strategy
	// verbs are the resource's verbs when kube-apiserver's storage of it
	// does not serve all of allVerbs (namespaces have no deletecollection).
	verbs []string
	// scale reads the Scale's selector of a built-in kind with a scale
	// subresource (custom kinds describe theirs in the CRD); nil for none.
	scale scaleSelector
	// attrs gives the fields a field selector matches when the kind has
	// more than metadata.name and metadata.namespace (fields.go).
	attrs attrsFunc
	// binding: the kind is Pod, with its binding subresource (binding.go).
	binding bool
	// bindsPods: the resource's creates bind pods (bindings).
	bindsPods bool
	// probed: the kind is not stored; its objects are the components'
	// probed health (componentstatuses).
	probed bool
	// more are the kind's other subresources (subresources.go).
	more []subresource
	// storedAs is set for kinds stored in another version (versions.go).
	storedAs *storedAs
	// status is the strategy of the status subresource; nil when the kind
	// has none.
	status rest.RESTUpdateStrategy
	// custom is set for kinds served for a CustomResourceDefinition.
	custom *custom
	// defaultTable: kube-apiserver prints the kind with the default
	// columns (Name, Created At), not a printer of its own.
	defaultTable bool
	// deleteFinalizer is added by a delete (see DeleteFinalizer).
	deleteFinalizer string
	// namespace: the kind is Namespace, whose deletion marks it
	// Terminating and empties it, and whose objects the namespace rules
	// read (namespaces.go).
	namespace bool
	// keepsSchemaExtensions: the kind is CustomResourceDefinition, whose
	// schemas' x-kubernetes-patch-* keys strata keeps beside the typed
	// object (crdextensions.go).
	keepsSchemaExtensions bool
	// fields are the kind's field managers (fieldmanager.go).
	fields *fieldManagers
	// serviceAddresses: the kind's objects hold cluster IPs and node
	// ports, which allocator hands out.
	serviceAddresses bool
	// allocator hands out what objects hold outside themselves (a
	// Service's cluster IPs and node ports); nil for most kinds.
	allocator Allocator
	// review builds the upstream REST of a review kind (reviews.go);
	// nil for the stored kinds.
	review reviewREST
	// escalation builds the RBAC kinds' escalation check, guard, once the
	// server's authorizer is known (escalation.go); nil for other kinds.
	escalation escalationCheck
	guard      policyStorage
}

// GroupResource names the kind's resource.
func (k *Kind) GroupResource() schema.GroupResource {
	return schema.GroupResource{Group: k.GVK.Group, Resource: k.Resource}
}

// GroupVersionResource names the kind's resource with its version.
func (k *Kind) GroupVersionResource() schema.GroupVersionResource {
	return k.GVK.GroupVersion().WithResource(k.Resource)
}

// ListGVK is the kind of the kind's lists.
func (k *Kind) ListGVK() schema.GroupVersionKind {
	return k.GVK.GroupVersion().WithKind(k.GVK.Kind + "List")
}

// HasStatus says whether the kind has a status subresource.
func (k *Kind) HasStatus() bool { return k.status != nil }

// HasBinding says whether the kind has the binding subresource, which
// answers create only.
func (k *Kind) HasBinding() bool { return k.binding }

// DeleteFinalizer is the finalizer kube-apiserver's storage of the kind
// adds when an object is deleted, so that the object stays until a
// controller has cleaned up after it ("" for none): CRDs stay until their
// custom resources are gone.
func (k *Kind) DeleteFinalizer() string { return k.deleteFinalizer }

// Subresources lists the kind's subresources that read and write an
// object through get, update and patch ("status", "scale", and those of a
// strategy of their own such as "ephemeralcontainers", which may answer
// fewer: namespaces/finalize only update).
func (k *Kind) Subresources() []string {
	var out []string
	if k.HasStatus() {
		out = append(out, "status")
	}
	if k.HasScale() {
		out = append(out, "scale")
	}
	for _, s := range k.more {
		if s.update != nil {
			out = append(out, s.name)
		}
	}
	return out
}

// allVerbs are the verbs of a resource kube-apiserver's generic store
// serves in full.
var allVerbs = []string{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}

// Verbs lists the verbs the resource answers, as discovery shows them.
func (k *Kind) Verbs() []string {
	if k.verbs != nil {
		return k.verbs
	}
	return allVerbs
}

// Allows says whether the resource answers verb.
func (k *Kind) Allows(verb string) bool {
	for _, v := range k.Verbs() {
		if v == verb {
			return true
		}
	}
	return false
}

// CRDResource is the resource of CustomResourceDefinitions.
var CRDResource = ext.WithResource("customresourcedefinitions")

// Builtin returns the built-in kinds, sorted by group then resource. Each
// call returns fresh copies.
func Builtin() []*Kind {
	rows := append(append([]Kind(nil), builtin...), reviews...)
	out := make([]*Kind, len(rows))
	for i := range rows {
		k := rows[i]
		k.SingularName = singular(k.GVK.Kind)
		k.fields = &fieldManagers{}
		out[i] = &k
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].GVK.Group != out[j].GVK.Group {
			return out[i].GVK.Group < out[j].GVK.Group
		}
		return out[i].Resource < out[j].Resource
	})
	return out
}

// singular is the singular resource name discovery shows: the kind in
// lower case.
func singular(kind string) string { return strings.ToLower(kind) }
