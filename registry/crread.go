package registry

import (
	"reflect"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// OnRead is what a custom kind does to every object read from storage, as
// apiextensions-apiserver's storage codec does when it decodes one: prune
// and coerce it by the served version's schema, then apply that schema's
// defaults. A default added to a CRD thus shows in objects written
// before it, on every read, without a write. nil for built-in kinds and
// versions without a schema.
//
// Kinds converted by a webhook do this in their conversion instead
// (WebhookConversion), by the schema of the version each object is stored
// in, as apiextensions-apiserver does.
func (k *Kind) OnRead() func(*unstructured.Unstructured) error {
	c := k.custom
	if c == nil || c.structural == nil || c.webhook != nil {
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
		k.custom.crd.Spec.PreserveUnknownFields == o.custom.crd.Spec.PreserveUnknownFields &&
		convertsLike(k.custom.webhook, o.custom.webhook, k.custom.crd, o.custom.crd))
}

// convertsLike says whether two kinds convert objects alike: both with
// the None strategy, or both through the same webhook configuration with
// the same versions and schemas (a store's conversion is fixed when it
// starts).
func convertsLike(a, b *webhookConversion, acrd, bcrd *apiextensionsv1.CustomResourceDefinition) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return reflect.DeepEqual(acrd.Spec.Conversion, bcrd.Spec.Conversion) && reflect.DeepEqual(a.schemas, b.schemas)
}
