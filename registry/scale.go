package registry

import (
	"context"
	"fmt"
	"strings"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kubernetes/pkg/apis/autoscaling"
	autoscalingvalidation "k8s.io/kubernetes/pkg/apis/autoscaling/validation"
)

// scaleSelector reads the label selector of a built-in scalable object as
// the Scale's status.selector: spec.selector, a LabelSelector
// (deployments, replica sets, stateful sets) or a map (replication
// controllers), as kube-apiserver's scaleFrom<Kind> functions in
// pkg/registry/<group>/<kind>/storage read it.
type scaleSelector func(u *unstructured.Unstructured) (string, error)

// labelSelectorOf reads spec.selector as a metav1.LabelSelector.
func labelSelectorOf(u *unstructured.Unstructured) (string, error) {
	raw, _, _ := unstructured.NestedMap(u.Object, "spec", "selector")
	var ls metav1.LabelSelector
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(raw, &ls); err != nil {
		return "", err
	}
	sel, err := metav1.LabelSelectorAsSelector(&ls)
	if err != nil {
		return "", err
	}
	return sel.String(), nil
}

// mapSelectorOf reads spec.selector as a map of labels.
func mapSelectorOf(u *unstructured.Unstructured) (string, error) {
	m, _, err := unstructured.NestedStringMap(u.Object, "spec", "selector")
	if err != nil {
		return "", err
	}
	return labels.SelectorFromSet(m).String(), nil
}

// HasScale says whether the kind has a scale subresource.
func (k *Kind) HasScale() bool { return k.scale != nil || k.Scale() != nil }

// ScaleOf is the autoscaling/v1 Scale of an object of the kind. A selector
// that does not parse is a 400, as in kube-apiserver.
func (k *Kind) ScaleOf(u *unstructured.Unstructured) (*autoscalingv1.Scale, error) {
	sc := &autoscalingv1.Scale{
		TypeMeta: metav1.TypeMeta{APIVersion: "autoscaling/v1", Kind: "Scale"},
		ObjectMeta: metav1.ObjectMeta{Name: u.GetName(), Namespace: u.GetNamespace(), UID: u.GetUID(),
			ResourceVersion: u.GetResourceVersion(), CreationTimestamp: u.GetCreationTimestamp()},
	}
	specPath, statusPath := k.replicasPaths()
	sc.Spec.Replicas = int32(nestedInt(u, specPath))
	sc.Status.Replicas = int32(nestedInt(u, statusPath))
	switch {
	case k.scale != nil:
		sel, err := k.scale(u)
		if err != nil {
			return nil, apierrors.NewBadRequest(err.Error())
		}
		sc.Status.Selector = sel
	case k.Scale().LabelSelectorPath != nil:
		sc.Status.Selector, _, _ = unstructured.NestedString(u.Object, jsonPath(*k.Scale().LabelSelectorPath)...)
	}
	return sc, nil
}

// WithReplicas is a copy of u asking for n replicas.
func (k *Kind) WithReplicas(u *unstructured.Unstructured, n int32) (*unstructured.Unstructured, error) {
	next := u.DeepCopy()
	specPath, _ := k.replicasPaths()
	if err := unstructured.SetNestedField(next.Object, int64(n), specPath...); err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	return next, nil
}

// ValidateScale validates the Scale a write of a built-in kind's scale
// subresource asks for, as kube-apiserver's ScaleREST does (replicas not
// negative): a 422 on kind Scale.autoscaling.
func (k *Kind) ValidateScale(ctx context.Context, scale, old *autoscalingv1.Scale) error {
	if k.scale == nil {
		return nil
	}
	var internal, internalOld autoscaling.Scale
	if err := Scheme.Convert(scale, &internal, nil); err != nil {
		return apierrors.NewInternalError(fmt.Errorf("registry: converting Scale: %w", err))
	}
	if err := Scheme.Convert(old, &internalOld, nil); err != nil {
		return apierrors.NewInternalError(fmt.Errorf("registry: converting Scale: %w", err))
	}
	errs := autoscalingvalidation.ValidateScaleUpdate(ctx, &internal, &internalOld, Scheme, scaleGVK{})
	if len(errs) > 0 {
		return apierrors.NewInvalid(autoscaling.Kind("Scale"), scale.Name, errs)
	}
	return nil
}

// scaleGVK maps every group-version to autoscaling/v1 Scale, the kind of
// the scale subresources of apps/v1 and core/v1.
type scaleGVK struct{}

func (scaleGVK) GroupVersionKind(schema.GroupVersion) schema.GroupVersionKind {
	return autoscalingv1.SchemeGroupVersion.WithKind("Scale")
}

// replicasPaths are the fields of the desired and current replicas.
func (k *Kind) replicasPaths() (spec, status []string) {
	if k.scale != nil {
		return []string{"spec", "replicas"}, []string{"status", "replicas"}
	}
	return jsonPath(k.Scale().SpecReplicasPath), jsonPath(k.Scale().StatusReplicasPath)
}

func nestedInt(obj *unstructured.Unstructured, path []string) int64 {
	n, _, _ := unstructured.NestedInt64(obj.Object, path...)
	return n
}

// jsonPath splits the simple paths CRDs use for scale (".spec.replicas").
func jsonPath(path string) []string {
	return strings.Split(strings.TrimPrefix(path, "."), ".")
}
