package registry

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	podutil "k8s.io/kubernetes/pkg/api/pod"
	api "k8s.io/kubernetes/pkg/apis/core"
	"k8s.io/kubernetes/pkg/apis/core/validation"
	kubefeatures "k8s.io/kubernetes/pkg/features"
)

// DecodeBinding reads the body of a pods/binding or bindings create: a
// v1 Binding, strictly decoded, converted to the internal type and checked
// with upstream's ValidatePodBinding. As in kube-apiserver, a binding that
// fails that validation is not a 422: its aggregated error is answered as
// an internal error.
func DecodeBinding(body []byte) (*api.Binding, error) {
	k := &Kind{GVK: core.WithKind("Binding"), Resource: "bindings"}
	obj, _, err := k.Decode(body, FieldValidationStrict)
	if err != nil {
		return nil, err
	}
	var b api.Binding
	if err := Scheme.Convert(obj.(*corev1.Binding), &b, nil); err != nil {
		return nil, apierrors.NewInternalError(fmt.Errorf("registry: converting Binding: %w", err))
	}
	if errs := validation.ValidatePodBinding(&b); len(errs) > 0 {
		return nil, errs.ToAggregate()
	}
	return &b, nil
}

// BindPod assigns a stored pod to the binding's node as kube-apiserver's
// pods/binding does (pkg/registry/core/pod/storage, setPodNodeAndMetadata,
// unexported there and mirrored here): refused for a pod being deleted,
// already assigned or with scheduling gates; otherwise spec.nodeName set,
// the nomination cleared, the binding's annotations and labels merged and
// the PodScheduled condition set. The pod's strategy is bypassed, as
// upstream bypasses it. Errors are plain (the caller words them as a
// conflict on pods/binding).
func (k *Kind) BindPod(u *unstructured.Unstructured, b *api.Binding) (*unstructured.Unstructured, error) {
	internal, err := k.internalOf(u)
	if err != nil {
		return nil, err
	}
	pod, ok := internal.(*api.Pod)
	if !ok {
		return nil, fmt.Errorf("unexpected object: %T", internal)
	}
	if pod.DeletionTimestamp != nil {
		return nil, fmt.Errorf("pod %s is being deleted, cannot be assigned to a host", pod.Name)
	}
	if pod.Spec.NodeName != "" {
		return nil, fmt.Errorf("pod %v is already assigned to node %q", pod.Name, pod.Spec.NodeName)
	}
	if len(pod.Spec.SchedulingGates) != 0 {
		return nil, fmt.Errorf("pod %v has non-empty .spec.schedulingGates", pod.Name)
	}
	pod.Spec.NodeName = b.Target.Name
	if utilfeature.DefaultFeatureGate.Enabled(kubefeatures.ClearingNominatedNodeNameAfterBinding) {
		pod.Status.NominatedNodeName = ""
	}
	if pod.Annotations == nil {
		pod.Annotations = make(map[string]string)
	}
	for key, v := range b.Annotations {
		pod.Annotations[key] = v
	}
	podutil.DropInitContainerAnnotations(pod.Annotations)
	if utilfeature.DefaultFeatureGate.Enabled(kubefeatures.PodTopologyLabelsAdmission) && len(b.Labels) > 0 {
		if pod.Labels == nil {
			pod.Labels = make(map[string]string)
		}
		for key, v := range b.Labels {
			pod.Labels[key] = v
		}
	}
	podutil.UpdatePodCondition(&pod.Status, &api.PodCondition{Type: api.PodScheduled, Status: api.ConditionTrue})
	return k.stored(pod)
}
