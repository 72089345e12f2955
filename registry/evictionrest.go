package registry

import (
	"context"
	"fmt"
	"net/http"
	"reflect"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
	api "k8s.io/kubernetes/pkg/apis/core"
	policyapi "k8s.io/kubernetes/pkg/apis/policy"
	"k8s.io/utils/ptr"

	"github.com/stratadev/strata/storage"
)

// gvrPDBs names the PodDisruptionBudgets an eviction consults.
var gvrPDBs = schema.GroupVersionResource{Group: "policy", Version: "v1", Resource: "poddisruptionbudgets"}

// evictionsRetry is upstream's EvictionsRetry: how often a pod's delete is
// tried again when the pod changes under it.
var evictionsRetry = wait.Backoff{Steps: 20, Duration: 500 * time.Millisecond, Factor: 1.0, Jitter: 0.1}

// evictionREST serves pods/eviction as kube-apiserver's EvictionREST
// (pkg/registry/core/pod/storage/eviction.go) does: a pod that disrupts
// nothing (pending, terminal, being deleted) is deleted at once;
// otherwise its one matching PodDisruptionBudget must allow a disruption,
// which is taken from the budget's status in a guaranteed update (the pod
// recorded in disruptedPods), and the pod is marked DisruptionTarget and
// deleted with the Eviction's deleteOptions. The answer is a Status.
type evictionREST struct {
	pods   *Store
	lookup func(schema.GroupVersionResource) (*Store, bool)
}

func (e *evictionREST) BodyKind() *Kind { return EvictionKind() }

func (e *evictionREST) Create(ctx context.Context, req *CreateRequest) (runtime.Object, []string, error) {
	pdbs, ok := e.lookup(gvrPDBs)
	if !ok {
		return nil, nil, NotServed()
	}
	ev, warnings, err := DecodeEviction(req.Body, req.FieldValidation)
	if err != nil {
		return nil, nil, err
	}
	if err := checkEviction(ev, req); err != nil {
		return nil, nil, err
	}
	opts, err := propagateDryRun(ev, req.DryRun)
	if err != nil {
		return nil, nil, err
	}
	run := eviction{pods: e.pods, pdbs: pdbs, ns: req.Namespace, name: req.Name}
	status, err := run.evict(ctx, opts)
	if err != nil {
		return nil, nil, err
	}
	status.TypeMeta = metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}
	if status.Code == 0 {
		status.Code = http.StatusCreated
	}
	return status, warnings, nil
}

// checkEviction refuses an Eviction naming another pod or namespace than
// the URL, or asking to skip unreadable objects.
func checkEviction(ev *policyapi.Eviction, req *CreateRequest) error {
	if ev.Name != req.Name {
		return apierrors.NewBadRequest("name in URL does not match name in Eviction object")
	}
	if ev.Namespace != "" && ev.Namespace != req.Namespace {
		return apierrors.NewBadRequest("the namespace of the provided object does not match the namespace sent on the request")
	}
	if ev.DeleteOptions != nil && ptr.Deref(ev.DeleteOptions.IgnoreStoreReadErrorWithClusterBreakingPotential, false) {
		return IgnoreStoreReadErrorRefused(ev.Name)
	}
	return nil
}

// propagateDryRun is upstream's: the request's dryRun and the Eviction's
// deleteOptions.dryRun must agree; the result is the options to delete with.
func propagateDryRun(ev *policyapi.Eviction, dryRun bool) (*metav1.DeleteOptions, error) {
	var fromQuery []string
	if dryRun {
		fromQuery = []string{metav1.DryRunAll}
	}
	if ev.DeleteOptions == nil {
		return &metav1.DeleteOptions{DryRun: fromQuery}, nil
	}
	switch {
	case len(ev.DeleteOptions.DryRun) == 0:
		ev.DeleteOptions.DryRun = fromQuery
	case len(fromQuery) > 0 && !reflect.DeepEqual(fromQuery, ev.DeleteOptions.DryRun):
		return nil, apierrors.NewInternalError(fmt.Errorf("Non-matching dry-run options in request and content: %v and %v",
			fromQuery, ev.DeleteOptions.DryRun))
	}
	return ev.DeleteOptions, nil
}

// eviction is one eviction of the pod ns/name.
type eviction struct {
	pods, pdbs *Store
	ns, name   string
}

// evict runs upstream's eviction flow.
func (e *eviction) evict(ctx context.Context, opts *metav1.DeleteOptions) (*metav1.Status, error) {
	success := &metav1.Status{Status: metav1.StatusSuccess}
	pod, deleted, err := e.evictWithoutBudget(ctx, opts)
	if err != nil || deleted {
		return success, err
	}
	budgets, err := e.podBudgets(ctx, pod)
	if err != nil {
		return nil, err
	}
	if len(budgets) > 1 {
		return &metav1.Status{Status: metav1.StatusFailure, Code: http.StatusInternalServerError,
			Message: "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support."}, nil
	}
	pdbName, skipped := "", false
	if len(budgets) == 1 {
		pdbName = budgets[0].GetName()
		skipped, err = e.takeDisruption(ctx, pod, budgets[0], len(opts.DryRun) > 0)
		if err != nil {
			return nil, err
		}
	}
	deleteOpts := opts
	if skipped {
		// The unready pod was let go without its budget: only while it
		// stays as read (not turned ready meanwhile).
		deleteOpts = opts.DeepCopy()
		setPreconditionsResourceVersion(deleteOpts, pod.ResourceVersion)
	}
	if err := e.markAndDelete(ctx, deleteOpts); err != nil {
		if apierrors.IsConflict(err) && skipped && resourceVersionIsUnset(opts) {
			// Let the client try again.
			return nil, TooManyRequests(pdbName)
		}
		return nil, err
	}
	return success, nil
}

// evictWithoutBudget deletes the pod at once when its budgets do not
// matter (CanIgnorePDB), retrying when the pod changes meanwhile (unless
// the client gave a resourceVersion). Otherwise it returns the pod.
func (e *eviction) evictWithoutBudget(ctx context.Context, opts *metav1.DeleteOptions) (*api.Pod, bool, error) {
	shouldRetry := apierrors.IsConflict
	if !resourceVersionIsUnset(opts) {
		shouldRetry = func(error) bool { return false }
	}
	var pod *api.Pod
	deleted := false
	err := retry.OnError(evictionsRetry, shouldRetry, func() error {
		cur, err := e.pods.storage.Get(ctx, e.ns, e.name, storage.GetOptions{})
		if err != nil {
			return err
		}
		if pod, err = e.pods.kind.PodOf(cur); err != nil {
			return err
		}
		if !CanIgnorePDB(pod) {
			return nil
		}
		deleteOpts := opts
		if ShouldEnforceResourceVersion(pod) && resourceVersionIsUnset(opts) {
			// Not racing with another budget-minded writer.
			deleteOpts = opts.DeepCopy()
			setPreconditionsResourceVersion(deleteOpts, pod.ResourceVersion)
		}
		if err := e.markAndDelete(ctx, deleteOpts); err != nil {
			return err
		}
		deleted = true
		return nil
	})
	return pod, deleted, err
}

// podBudgets are the budgets of the pod's namespace that select it.
func (e *eviction) podBudgets(ctx context.Context, pod *api.Pod) ([]*unstructured.Unstructured, error) {
	list, err := e.pdbs.storage.List(ctx, pod.Namespace, storage.ListOptions{})
	if err != nil {
		return nil, err
	}
	var out []*unstructured.Unstructured
	for i := range list.Items {
		pdb, err := e.pdbs.kind.PDBOf(&list.Items[i])
		if err != nil {
			return nil, err
		}
		if PDBMatches(pdb, pod) {
			out = append(out, &list.Items[i])
		}
	}
	return out, nil
}

// takeDisruption takes one disruption from the budget for the pod, in a
// guaranteed update of the budget's status (a dry run only checks), unless
// the pod is unready and the budget lets it go without (skipped).
func (e *eviction) takeDisruption(ctx context.Context, pod *api.Pod, listed *unstructured.Unstructured, dryRun bool) (skipped bool, err error) {
	pdbs := e.pdbs
	pdb, err := pdbs.kind.PDBOf(listed)
	if err != nil {
		return false, err
	}
	if SkipsBudget(pod, pdb) {
		return true, nil
	}
	if dryRun {
		return false, CheckAndDecrement(pod.Name, pdb, true, time.Now())
	}
	pctx := pdbs.kind.Context(ctx, pod.Namespace, "update", "status", nil)
	_, err = pdbs.storage.GuaranteedUpdate(ctx, pod.Namespace, pdb.Name, nil, func(cur *unstructured.Unstructured) (*unstructured.Unstructured, error) {
		pdb, err := pdbs.kind.PDBOf(cur)
		if err != nil {
			return nil, err
		}
		if err := CheckAndDecrement(pod.Name, pdb, false, time.Now()); err != nil {
			return nil, err
		}
		prepared, err := pdbs.kind.PrepareUpdate(pctx, pdb, pdbs.kind.Current(cur), "status", nil)
		if err != nil {
			return nil, err
		}
		return prepared.Unstructured, nil
	})
	return false, err
}

// markAndDelete marks the pod DisruptionTarget through pods/status (not in
// a dry run) and deletes it with opts, as upstream's
// addConditionAndDeletePod: the options' preconditions hold for the
// marking, and a resourceVersion precondition then names the marked pod.
func (e *eviction) markAndDelete(ctx context.Context, opts *metav1.DeleteOptions) error {
	pods := e.pods
	if len(opts.DryRun) == 0 {
		pctx := pods.kind.Context(ctx, e.ns, "update", "status", nil)
		out, err := pods.storage.GuaranteedUpdate(ctx, e.ns, e.name, nil, func(cur *unstructured.Unstructured) (*unstructured.Unstructured, error) {
			if err := checkEvictionPreconditions(opts.Preconditions, cur); err != nil {
				return nil, err
			}
			return pods.kind.Evicting(pctx, cur)
		})
		if err != nil {
			return err
		}
		if !resourceVersionIsUnset(opts) {
			opts = opts.DeepCopy()
			setPreconditionsResourceVersion(opts, out.GetResourceVersion())
		}
	}
	_, _, err := pods.Delete(ctx, e.ns, e.name, opts, nil)
	return err
}

// checkEvictionPreconditions words a failed precondition as upstream's
// eviction does (on resource "Pod").
func checkEvictionPreconditions(p *metav1.Preconditions, cur *unstructured.Unstructured) error {
	if p == nil {
		return nil
	}
	gr := schema.GroupResource{Resource: "Pod"}
	if uid := p.UID; uid != nil && len(*uid) > 0 && *uid != cur.GetUID() {
		return apierrors.NewConflict(gr, cur.GetName(), fmt.Errorf(
			"the UID in the precondition (%s) does not match the UID in record (%s). The object might have been deleted and then recreated",
			*uid, cur.GetUID()))
	}
	if rv := p.ResourceVersion; rv != nil && len(*rv) > 0 && *rv != cur.GetResourceVersion() {
		return apierrors.NewConflict(gr, cur.GetName(), fmt.Errorf(
			"the ResourceVersion in the precondition (%s) does not match the ResourceVersion in record (%s). The object might have been modified",
			*rv, cur.GetResourceVersion()))
	}
	return nil
}

func setPreconditionsResourceVersion(opts *metav1.DeleteOptions, rv string) {
	if opts.Preconditions == nil {
		opts.Preconditions = &metav1.Preconditions{}
	}
	opts.Preconditions.ResourceVersion = &rv
}

func resourceVersionIsUnset(opts *metav1.DeleteOptions) bool {
	return opts.Preconditions == nil || opts.Preconditions.ResourceVersion == nil
}
