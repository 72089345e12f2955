package registry

import (
	"context"
	"fmt"
	"net/http"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	podutil "k8s.io/kubernetes/pkg/api/pod"
	api "k8s.io/kubernetes/pkg/apis/core"
	"k8s.io/kubernetes/pkg/apis/core/validation"
	kubefeatures "k8s.io/kubernetes/pkg/features"

	"github.com/stratadev/strata/storage"
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

// gvrPods names the pods a binding assigns.
var gvrPods = core.WithResource("pods")

// bindingREST serves pods/binding and (legacy) bindings as kube-apiserver
// does: the Binding is validated, its uid and resourceVersion are
// preconditions on the pod, and the pod is updated without its strategy
// (BindPod). The answer is a Success Status.
type bindingREST struct {
	// pods is the pods' store for pods/binding; for bindings, lookup
	// finds it.
	pods        *Store
	lookup      func(schema.GroupVersionResource) (*Store, bool)
	subresource bool
}

func (b *bindingREST) BodyKind() *Kind {
	return &Kind{GVK: core.WithKind("Binding"), Resource: "bindings"}
}

func (b *bindingREST) Create(ctx context.Context, req *CreateRequest) (runtime.Object, []string, error) {
	pods := b.pods
	if pods == nil {
		var ok bool
		if pods, ok = b.lookup(gvrPods); !ok {
			return nil, nil, NotServed()
		}
	}
	binding, err := DecodeBinding(req.Body)
	if err != nil {
		return nil, nil, err
	}
	if b.subresource && binding.Name != req.Name {
		return nil, nil, apierrors.NewBadRequest("name in URL does not match name in Binding object")
	}
	if binding.Namespace != "" && binding.Namespace != req.Namespace {
		return nil, nil, apierrors.NewBadRequest("the namespace of the provided object does not match the namespace sent on the request")
	}
	if err := pods.bind(ctx, req.Namespace, binding, req.DryRun); err != nil {
		return nil, nil, err
	}
	return &metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status: metav1.StatusSuccess, Code: http.StatusCreated}, nil, nil
}

// bind assigns the pod the binding names, in a guaranteed update of it
// (a dry run only checks).
func (s *Store) bind(ctx context.Context, ns string, b *api.Binding, dryRun bool) error {
	bind := func(cur *unstructured.Unstructured) (*unstructured.Unstructured, error) {
		out, err := s.kind.BindPod(cur, b)
		if _, isStatus := err.(apierrors.APIStatus); err != nil && !isStatus {
			err = apierrors.NewConflict(schema.GroupResource{Resource: "pods/binding"}, b.Name, err)
		}
		return out, err
	}
	pre := &storage.Preconditions{UID: b.UID, ResourceVersion: b.ResourceVersion}
	if !dryRun {
		_, err := s.storage.GuaranteedUpdate(ctx, ns, b.Name, pre, bind)
		return err
	}
	cur, err := s.storage.Get(ctx, ns, b.Name, storage.GetOptions{})
	if err == nil {
		if err = pre.Check(s.kind.GroupResource(), cur); err == nil {
			_, err = bind(cur)
		}
	}
	return err
}
