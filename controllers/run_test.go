package controllers

import (
	"reflect"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	metadatafake "k8s.io/client-go/metadata/fake"
	"k8s.io/client-go/metadata/metadatainformer"
)

// TestTermFactory checks which informers the garbage collector and the
// quota controller get: the server's typed ones only for the kinds whose
// quota evaluators read typed objects, metadata ones for every other
// resource (a typed informer would hold a second full copy of what the
// watch cache holds).
func TestTermFactory(t *testing.T) {
	gvr := func(group, version, resource string) schema.GroupVersionResource {
		return schema.GroupVersionResource{Group: group, Version: version, Resource: resource}
	}
	tests := []struct {
		gvr   schema.GroupVersionResource
		typed reflect.Type // nil: a metadata informer
	}{
		{gvr("", "v1", "pods"), reflect.TypeFor[*corev1.Pod]()},
		{gvr("", "v1", "services"), reflect.TypeFor[*corev1.Service]()},
		{gvr("", "v1", "persistentvolumeclaims"), reflect.TypeFor[*corev1.PersistentVolumeClaim]()},
		{gvr("", "v1", "configmaps"), nil},
		{gvr("", "v1", "secrets"), nil},
		{gvr("apps", "v1", "deployments"), nil},
		{gvr("example.com", "v1", "gizmos"), nil},
	}
	for _, tt := range tests {
		t.Run(tt.gvr.String(), func(t *testing.T) {
			typed := informers.NewSharedInformerFactory(fake.NewClientset(), 0)
			scheme := runtime.NewScheme()
			if err := metav1.AddMetaToScheme(scheme); err != nil {
				t.Fatal(err)
			}
			md := metadatainformer.NewSharedInformerFactory(metadatafake.NewSimpleMetadataClient(scheme), 0)
			stop := make(chan struct{})
			f := &termFactory{t: &term{cfg: Config{Informers: typed, InformersStop: stop}, metadata: md}}
			if _, err := f.ForResource(tt.gvr); err != nil {
				t.Fatalf("ForResource: %v", err)
			}
			f.Start(stop)
			// Asked with a closed channel, each factory answers at once with
			// the informers it has started.
			now := make(chan struct{})
			close(now)
			var gotTyped []reflect.Type
			for typ := range typed.WaitForCacheSync(now) {
				gotTyped = append(gotTyped, typ)
			}
			var gotMeta []schema.GroupVersionResource
			for r := range md.WaitForCacheSync(now) {
				gotMeta = append(gotMeta, r)
			}
			close(stop)
			typed.Shutdown()
			md.Shutdown()
			if tt.typed != nil {
				if !slices.Equal(gotTyped, []reflect.Type{tt.typed}) || len(gotMeta) != 0 {
					t.Errorf("typed informers %v, metadata informers %v; want the typed %v alone", gotTyped, gotMeta, tt.typed)
				}
				return
			}
			if len(gotTyped) != 0 || !slices.Equal(gotMeta, []schema.GroupVersionResource{tt.gvr}) {
				t.Errorf("typed informers %v, metadata informers %v; want the metadata informer of %s alone", gotTyped, gotMeta, tt.gvr)
			}
		})
	}
}
