package registry

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	endpointsdiscovery "k8s.io/apiserver/pkg/endpoints/discovery"
)

// storedAs describes a kind served in a version (or group) other than the
// one its objects are stored in, as kube-apiserver stores one object for
// autoscaling/v1 and v2 HorizontalPodAutoscalers, and for core and
// events.k8s.io Events.
type storedAs struct {
	// gvk is the stored version's kind, keys the resource whose keys the
	// objects live under.
	gvk  schema.GroupVersionKind
	keys schema.GroupResource
}

// StoredWith says where and how the kind's objects are stored when they
// are not stored as served: the resource whose keys they share, and the
// conversions to the stored version and back (the scheme's, through the
// internal version). ok is false for kinds stored as served.
func (k *Kind) StoredWith() (keys schema.GroupResource, toStored, fromStored func(*unstructured.Unstructured) (*unstructured.Unstructured, error), ok bool) {
	if k.storedAs == nil {
		return schema.GroupResource{}, nil, nil, false
	}
	return k.storedAs.keys, convertFunc(k.GVK, k.storedAs.gvk), convertFunc(k.storedAs.gvk, k.GVK), true
}

// convertFunc converts stored objects of one version of a kind to another.
func convertFunc(from, to schema.GroupVersionKind) func(*unstructured.Unstructured) (*unstructured.Unstructured, error) {
	return func(u *unstructured.Unstructured) (*unstructured.Unstructured, error) {
		typed, err := toTyped(u, from)
		if err != nil {
			return nil, err
		}
		internal, err := toInternal(typed, from)
		if err != nil {
			return nil, err
		}
		return toUnstructured(internal, to)
	}
}

// StorageVersionHash is the storageVersionHash legacy discovery shows for
// the kind: kube-apiserver's hash (discovery.StorageVersionHash) of the
// group, version and kind its objects are stored as, which storage
// migrators watch for changes. "" for kinds whose objects are not stored
// (bindings, componentstatuses, the reviews), as kube-apiserver shows none for them.
func (k *Kind) StorageVersionHash() string {
	if k.GVK == core.WithKind("Binding") || k.GVK == core.WithKind("ComponentStatus") || k.IsReview() {
		return ""
	}
	gvk := k.GVK
	switch {
	case k.storedAs != nil:
		gvk = k.storedAs.gvk
	case k.custom != nil:
		gvk.Version = k.custom.storageVersion
	}
	return endpointsdiscovery.StorageVersionHash(gvk.Group, gvk.Version, gvk.Kind)
}
