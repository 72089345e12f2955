package registry

import (
	"reflect"

	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// OnRead is what a custom kind does to every object read from storage, as
// apiextensions-apiserver's storage codec does when it decodes one: prune
// and coerce it by the served version's schema, then apply that schema's
// defaults. A default added to a CRD thus shows in objects written
// before it, on every read, without a write. nil for built-in kinds and
// versions without a schema.
func (k *Kind) OnRead() func(*unstructured.Unstructured) error {
	c := k.custom
	if c == nil || c.structural == nil {
		return nil
	}
	return func(u *unstructured.Unstructured) error {
		if _, err := c.coerce(u, false); err != nil {
			return err
		}
		structuraldefaulting.Default(u.Object, c.structural)
		return nil
	}
}

// ReadsLike says whether objects read as o are read as k: the same kind,
// resource, scope, storage version, and the same schema (which OnRead
// applies). A CRD change that keeps all of them (its status, names, printer
// columns) may keep its stores and their caches; any other gets new ones,
// as kube-apiserver builds new storage for a changed CRD.
func (k *Kind) ReadsLike(o *Kind) bool {
	if k.GVK != o.GVK || k.Resource != o.Resource || k.Namespaced != o.Namespaced || k.StorageVersion() != o.StorageVersion() {
		return false
	}
	if (k.custom == nil) != (o.custom == nil) {
		return false
	}
	return k.custom == nil || (reflect.DeepEqual(k.custom.structural, o.custom.structural) &&
		k.custom.crd.Spec.PreserveUnknownFields == o.custom.crd.Spec.PreserveUnknownFields)
}
