package registry

import (
	"context"
	"errors"
	"fmt"
	"time"

	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	serializerjson "k8s.io/apimachinery/pkg/runtime/serializer/json"
	"k8s.io/apimachinery/pkg/util/validation/field"
	pdbhelper "k8s.io/component-helpers/apps/poddisruptionbudget"
	podutil "k8s.io/kubernetes/pkg/api/pod"
	api "k8s.io/kubernetes/pkg/apis/core"
	policyapi "k8s.io/kubernetes/pkg/apis/policy"
)

// This file holds the decisions of kube-apiserver's pods/eviction
// (k8s.io/kubernetes/pkg/registry/core/pod/storage/eviction.go, whose
// EvictionREST only a full generic store and a PodDisruptionBudget client
// can build): which pods skip the budget, whether a budget allows one more
// disruption, and the errors, worded as upstream words them.
// evictionrest.go runs the flow against the stores.

// MaxDisruptedPodSize is upstream's limit on a budget's disruptedPods: past
// it evictions are refused until the disruption controller catches up.
const MaxDisruptedPodSize = 2000

var v1Eviction = policyapi.SchemeGroupVersion.WithKind("Eviction")

// EvictionKind describes the body of a pods/eviction create.
func EvictionKind() *Kind {
	return &Kind{GVK: policyv1.SchemeGroupVersion.WithKind("Eviction"), Resource: "pods/eviction"}
}

// DecodeEviction reads the body of a pods/eviction create: a policy/v1 (or
// policy/v1beta1, which upstream also accepts) Eviction, converted to the
// internal type.
func DecodeEviction(body []byte, fv FieldValidation) (*policyapi.Eviction, []string, error) {
	k := EvictionKind()
	if gvk, err := serializerjson.DefaultMetaFactory.Interpret(body); err == nil &&
		gvk.Group == "policy" && gvk.Version == "v1beta1" && gvk.Kind == "Eviction" {
		k.GVK = *gvk
	}
	obj, warnings, err := k.Decode(body, fv)
	if err != nil {
		return nil, nil, err
	}
	internal, err := toInternal(obj, k.GVK)
	if err != nil {
		return nil, nil, apierrors.NewInternalError(err)
	}
	return internal.(*policyapi.Eviction), warnings, nil
}

// PodOf reads a stored pod as the internal type the eviction rules take.
func (k *Kind) PodOf(u *unstructured.Unstructured) (*api.Pod, error) {
	internal, err := k.internalOf(u)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	pod, ok := internal.(*api.Pod)
	if !ok {
		return nil, apierrors.NewInternalError(fmt.Errorf("registry: not a pod: %T", internal))
	}
	return pod, nil
}

// PDBOf reads a stored PodDisruptionBudget as the policy/v1 type upstream's
// eviction works on.
func (k *Kind) PDBOf(u *unstructured.Unstructured) (*policyv1.PodDisruptionBudget, error) {
	typed, err := k.Typed(u)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	pdb, ok := typed.(*policyv1.PodDisruptionBudget)
	if !ok {
		return nil, apierrors.NewInternalError(fmt.Errorf("registry: not a PodDisruptionBudget: %T", typed))
	}
	return pdb, nil
}

// CanIgnorePDB: a pod not running yet (pending), terminal, or already being
// deleted is deleted without consulting its budgets; it disrupts nothing.
func CanIgnorePDB(pod *api.Pod) bool {
	return pod.Status.Phase == api.PodSucceeded || pod.Status.Phase == api.PodFailed ||
		pod.Status.Phase == api.PodPending || !pod.DeletionTimestamp.IsZero()
}

// ShouldEnforceResourceVersion: the delete of a pod that is not terminal
// is conditional on the resourceVersion read, so that it cannot race with
// the pod becoming ready.
func ShouldEnforceResourceVersion(pod *api.Pod) bool {
	return !(pod.Status.Phase == api.PodSucceeded || pod.Status.Phase == api.PodFailed || !pod.DeletionTimestamp.IsZero())
}

// IsPodReady is upstream's test of a pod's health for its budget.
func IsPodReady(pod *api.Pod) bool { return podutil.IsPodReady(pod) }

// PDBMatches says whether the budget selects the pod: one of its
// namespace whose selector matches its labels (an invalid selector matches
// nothing).
func PDBMatches(pdb *policyv1.PodDisruptionBudget, pod *api.Pod) bool {
	if pdb.Namespace != pod.Namespace {
		return false
	}
	selector, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
	return err == nil && selector.Matches(labels.Set(pod.Labels))
}

// SkipsBudget: an unready pod is deleted without taking from the budget
// when the budget's policy is AlwaysAllow, or when the budget's healthy
// pods are enough without it.
func SkipsBudget(pod *api.Pod, pdb *policyv1.PodDisruptionBudget) bool {
	if IsPodReady(pod) {
		return false
	}
	if p := pdb.Spec.UnhealthyPodEvictionPolicy; p != nil && *p == policyv1.AlwaysAllow {
		return true
	}
	return pdb.Status.CurrentHealthy >= pdb.Status.DesiredHealthy && pdb.Status.DesiredHealthy > 0
}

// TooManyRequests is upstream's 429 for a budget it cannot decide on yet
// (status not observed, or a conflicting update of the pod).
func TooManyRequests(pdbName string) error {
	err := apierrors.NewTooManyRequests("Cannot evict pod as it would violate the pod's disruption budget.", 10)
	err.ErrStatus.Details.Causes = append(err.ErrStatus.Details.Causes, metav1.StatusCause{Type: policyv1.DisruptionBudgetCause,
		Message: fmt.Sprintf("The disruption budget %s is still being processed by the server.", pdbName)})
	return err
}

// CheckAndDecrement takes one disruption from the budget for podName, as
// upstream's checkAndDecrement: refused (429 or 403, with a
// DisruptionBudget cause) when the budget's status is not observed yet or
// allows none; otherwise disruptionsAllowed is decremented and, unless dry
// run, the pod recorded in disruptedPods at now.
func CheckAndDecrement(podName string, pdb *policyv1.PodDisruptionBudget, dryRun bool, now time.Time) error {
	if pdb.Status.ObservedGeneration < pdb.Generation {
		return TooManyRequests(pdb.Name)
	}
	if pdb.Status.DisruptionsAllowed < 0 {
		return forbiddenBudget(pdb.Name, "pdb disruptions allowed is negative", "pdb disruptions allowed is negative")
	}
	if len(pdb.Status.DisruptedPods) > MaxDisruptedPodSize {
		return forbiddenBudget(pdb.Name, "DisruptedPods map too big - too many evictions not confirmed by PDB controller",
			"too many pending evictions not confirmed by PDB controller")
	}
	if pdb.Status.DisruptionsAllowed == 0 {
		err := apierrors.NewTooManyRequests("Cannot evict pod as it would violate the pod's disruption budget.", 0)
		err.ErrStatus.Details.Causes = append(err.ErrStatus.Details.Causes,
			metav1.StatusCause{Type: policyv1.DisruptionBudgetCause, Message: noDisruptionMessage(pdb)})
		return err
	}
	pdb.Status.DisruptionsAllowed--
	if pdb.Status.DisruptionsAllowed == 0 {
		pdbhelper.UpdateDisruptionAllowedCondition(pdb)
	}
	if dryRun {
		return nil
	}
	if pdb.Status.DisruptedPods == nil {
		pdb.Status.DisruptedPods = make(map[string]metav1.Time)
	}
	// The disruption controller must not count the pod as available while
	// its deletion is on the way.
	pdb.Status.DisruptedPods[podName] = metav1.Time{Time: now}
	return nil
}

func forbiddenBudget(name, reason, detail string) error {
	err := apierrors.NewForbidden(policyapi.Resource("poddisruptionbudget"), name, errors.New(reason))
	err.ErrStatus.Details.Causes = append(err.ErrStatus.Details.Causes, metav1.StatusCause{
		Type:    policyv1.DisruptionBudgetCause,
		Message: fmt.Sprintf("The disruption budget %s does not allow evicting pods currently: %s", name, detail),
	})
	return err
}

// noDisruptionMessage explains a budget that allows no disruption, in
// upstream's order: a failed sync first (its health counts are stale).
func noDisruptionMessage(pdb *policyv1.PodDisruptionBudget) string {
	condition := meta.FindStatusCondition(pdb.Status.Conditions, policyv1.DisruptionAllowedCondition)
	failed := condition != nil && condition.Status == metav1.ConditionFalse && len(condition.Message) > 0
	switch {
	case failed && condition.Reason == policyv1.SyncFailedReason:
		return fmt.Sprintf("The disruption budget %s does not allow evicting pods currently because it failed sync: %s",
			pdb.Name, condition.Message)
	case pdb.Status.CurrentHealthy <= pdb.Status.DesiredHealthy:
		return fmt.Sprintf("The disruption budget %s needs %d healthy pods and has %d currently",
			pdb.Name, pdb.Status.DesiredHealthy, pdb.Status.CurrentHealthy)
	case failed:
		return fmt.Sprintf("The disruption budget %s does not allow evicting pods currently (%s): %s",
			pdb.Name, condition.Reason, condition.Message)
	}
	return fmt.Sprintf("The disruption budget %s does not allow evicting pods currently", pdb.Name)
}

// AddDisruptionTarget marks a pod about to be evicted with the
// DisruptionTarget condition, as upstream does before the delete.
func AddDisruptionTarget(pod *api.Pod) {
	podutil.UpdatePodCondition(&pod.Status, &api.PodCondition{
		Type:    api.DisruptionTarget,
		Status:  api.ConditionTrue,
		Reason:  "EvictionByEvictionAPI",
		Message: "Eviction API: evicting",
	})
}

// IgnoreStoreReadErrorRefused is upstream's 422 for an eviction asking to
// skip a corrupt object's read.
func IgnoreStoreReadErrorRefused(name string) error {
	return apierrors.NewInvalid(v1Eviction.GroupKind(), name, field.ErrorList{field.Invalid(
		field.NewPath("deleteOptions").Child("ignoreStoreReadErrorWithClusterBreakingPotential"), true,
		"can not be set for pod eviction, try after removing the option")})
}

// Evicting is the stored pod u with the DisruptionTarget condition added,
// prepared as an update of pods/status (upstream's eviction writes it
// through the status store).
func (k *Kind) Evicting(ctx context.Context, u *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	pod, err := k.PodOf(u)
	if err != nil {
		return nil, err
	}
	AddDisruptionTarget(pod)
	stored, err := k.stored(pod)
	if err != nil {
		return nil, err
	}
	external, err := toTyped(stored, k.GVK)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	prepared, err := k.PrepareUpdate(ctx, external, k.Current(u), "status", nil)
	if err != nil {
		return nil, err
	}
	return prepared.Unstructured, nil
}
