package testenv_test

import (
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/stratadev/strata/testenv"
)

func gadgetCRD() *apiextensionsv1.CustomResourceDefinition {
	return &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: "gadgets.example.com"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{Group: "example.com", Scope: apiextensionsv1.ClusterScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "gadgets", Singular: "gadget", Kind: "Gadget", ListKind: "GadgetList"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1alpha1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{Type: "object",
					XPreserveUnknownFields: ptrTo(true)}}}}}}
}

func ptrTo[T any](v T) *T { return &v }

// CRDs from a directory and as objects are served when Start returns:
// their custom resources can be created at once.
func TestCRDsAreServedWhenStartReturns(t *testing.T) {
	cfg := testenv.Start(t, testenv.CRDDirectoryPaths("testdata/crds"), testenv.CRDs(gadgetCRD()))
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	widget := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.com/v1", "kind": "Widget",
		"metadata": map[string]any{"name": "w"}, "spec": map[string]any{"size": int64(3), "unknown": "pruned"}}}
	got, err := dyn.Resource(schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}).
		Namespace("default").Create(t.Context(), widget, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if spec, _, _ := unstructured.NestedMap(got.Object, "spec"); len(spec) != 1 || spec["size"] != int64(3) {
		t.Errorf("widget's spec: %v, want map[size:3] (the unknown field pruned by the CRD's schema)", spec)
	}
	gadget := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.com/v1alpha1", "kind": "Gadget",
		"metadata": map[string]any{"name": "g"}}}
	if _, err := dyn.Resource(schema.GroupVersionResource{Group: "example.com", Version: "v1alpha1", Resource: "gadgets"}).
		Create(t.Context(), gadget, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The ConfigMap in the CRD file is not installed.
	if _, err := clientFor(t, cfg).CoreV1().ConfigMaps("default").Get(t.Context(), "not-a-crd", metav1.GetOptions{}); err == nil {
		t.Error("the ConfigMap of testdata/crds/widgets.yaml was created; CRDDirectoryPaths installs only CRDs")
	}
}
