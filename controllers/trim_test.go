package controllers

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestTrimManagedFields: typed and metadata-only objects lose their
// managed fields and keep the rest; what is not an object passes as is.
func TestTrimManagedFields(t *testing.T) {
	meta := metav1.ObjectMeta{Name: "a", Labels: map[string]string{"k": "v"},
		ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "m", Operation: metav1.ManagedFieldsOperationUpdate}}}
	cm := &corev1.ConfigMap{ObjectMeta: *meta.DeepCopy(), Data: map[string]string{"d": "x"}}
	pom := &metav1.PartialObjectMetadata{ObjectMeta: *meta.DeepCopy()}
	for _, obj := range []metav1.Object{cm, pom} {
		out, err := TrimManagedFields(obj)
		if err != nil || out != obj {
			t.Fatalf("TrimManagedFields(%T) = %v, %v; want the object itself", obj, out, err)
		}
		if obj.GetManagedFields() != nil || obj.GetName() != "a" || obj.GetLabels()["k"] != "v" {
			t.Errorf("%T after trimming: %+v", obj, obj)
		}
	}
	if cm.Data["d"] != "x" {
		t.Errorf("the ConfigMap lost its data: %v", cm.Data)
	}
	tomb := "not an object"
	if out, err := TrimManagedFields(tomb); err != nil || out != tomb {
		t.Errorf("TrimManagedFields(%q) = %v, %v", tomb, out, err)
	}
}
