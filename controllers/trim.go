package controllers

import "k8s.io/apimachinery/pkg/api/meta"

// TrimManagedFields is the informers' transform kube-controller-manager
// gives its shared and metadata informers (CreateControllerContext): the
// cached objects drop their managed fields, which no controller reads and
// which are a large part of a small object (a ConfigMap's entry and its
// fieldsV1). The server's own informers take it too, for the same reason:
// its controllers run on them, and its authorizers and authenticators read
// no managed fields either.
func TrimManagedFields(obj any) (any, error) {
	if accessor, err := meta.Accessor(obj); err == nil && accessor.GetManagedFields() != nil {
		accessor.SetManagedFields(nil)
	}
	return obj, nil
}
