package registry

import (
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	endpointsdiscovery "k8s.io/apiserver/pkg/endpoints/discovery"
	serverstorage "k8s.io/apiserver/pkg/server/storage"
	basecompatibility "k8s.io/component-base/compatibility"
)

// TestStorageVersionHash: every stored built-in kind's storageVersionHash is
// the hash of the version strata stores it in, which is kube-apiserver
// v1.37's storage version (its resource encoding config, with its rule
// that a resource is stored in a version the previous release could read)
// except for the resources named here.
func TestStorageVersionHash(t *testing.T) {
	encoding := serverstorage.NewDefaultResourceEncodingConfigForEffectiveVersion(Scheme,
		basecompatibility.NewEffectiveVersionFromString("1.37", "", ""))
	var differ []string
	for _, k := range Builtin() {
		h := k.StorageVersionHash()
		if k.Resource == "bindings" || k.Resource == "componentstatuses" || k.IsReview() {
			if h != "" {
				t.Errorf("%s: storageVersionHash %q for a resource that is not stored", k.Resource, h)
			}
			continue
		}
		stored := k.GVK
		if k.storedAs != nil {
			stored = k.storedAs.gvk
		}
		if want := endpointsdiscovery.StorageVersionHash(stored.Group, stored.Version, stored.Kind); h != want {
			t.Errorf("%s: storageVersionHash %q, want %q (%s)", k.GroupResource(), h, want, stored)
		}
		example, err := Scheme.New(stored.GroupKind().WithVersion(runtime.APIVersionInternal))
		if err != nil {
			t.Fatal(err)
		}
		kube, err := encoding.BackwardCompatibileStorageEncodingFor(schema.GroupResource{Group: stored.Group, Resource: k.Resource}, example)
		if err != nil {
			t.Fatal(err)
		}
		if kube != stored.GroupVersion() {
			differ = append(differ, k.GroupResource().String()+" "+kube.Version)
		}
	}
	slices.Sort(differ)
	// New in v1 in v1.37: kube-apiserver still stores them in the beta
	// version v1.36 can read; strata stores what it serves (docs/server.md).
	want := []string{
		"clustertrustbundles.certificates.k8s.io v1beta1", "devicetaintrules.resource.k8s.io v1beta2",
		"podcertificaterequests.certificates.k8s.io v1beta1", "storageversionmigrations.storagemigration.k8s.io v1beta1",
	}
	if !slices.Equal(differ, want) {
		t.Errorf("resources kube-apiserver stores in another version: %q, want %q", differ, want)
	}
}
