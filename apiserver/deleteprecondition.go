package apiserver

import (
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// checkDeletePreconditions refuses a delete whose preconditions the object
// read does not meet, as kube-apiserver's rest.BeforeDelete does before
// anything else of the delete: 409 on the object's kind (not its
// resource), with BeforeDelete's words. The store checks the same
// preconditions again in its transaction, where a write between the read
// and the delete gets the storage layer's wording, as upstream's does.
func checkDeletePreconditions(kind schema.GroupVersionKind, cur *unstructured.Unstructured, pre *metav1.Preconditions) error {
	if pre == nil {
		return nil
	}
	gr := schema.GroupResource{Group: kind.Group, Resource: kind.Kind}
	if pre.UID != nil && *pre.UID != cur.GetUID() {
		return apierrors.NewConflict(gr, cur.GetName(), fmt.Errorf("the UID in the precondition (%s) does not match the UID in record (%s). The object might have been deleted and then recreated", *pre.UID, cur.GetUID()))
	}
	if pre.ResourceVersion != nil && *pre.ResourceVersion != cur.GetResourceVersion() {
		return apierrors.NewConflict(gr, cur.GetName(), fmt.Errorf("the ResourceVersion in the precondition (%s) does not match the ResourceVersion in record (%s). The object might have been modified", *pre.ResourceVersion, cur.GetResourceVersion()))
	}
	return nil
}
