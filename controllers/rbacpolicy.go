package controllers

import (
	"context"
	"fmt"
	"sync"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	rbacclient "k8s.io/client-go/kubernetes/typed/rbac/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/component-helpers/auth/rbac/reconciliation"
	"k8s.io/klog/v2"
	rbacrest "k8s.io/kubernetes/pkg/registry/rbac/rest"
)

// This is kube-apiserver's rbac/bootstrap-roles post-start hook
// (k8s.io/kubernetes/pkg/registry/rbac/rest: EnsureRBACPolicy, whose
// steps are unexported there), with two changes that only make it
// sooner:
//
//   - The first attempt is made at once. The hook's wait.Poll sleeps its
//     one-second interval before the first one: a second of every
//     start-up, spent idle.
//   - The roles and bindings are reconciled all at once, not one after
//     the other: on a new data directory each is a create, an fsync'd etcd
//     write, which etcd batches when they come together; on an existing
//     one each is a read.
//
// What is reconciled, how (k8s.io/component-helpers' reconciliation, with
// its retry on conflicts) and the retries of the whole (every second, for
// 30 seconds, until an attempt reconciles everything) are the hook's.

// policyWorkers is how many objects of the bootstrap policy are
// reconciled at once: all of them (141 in v1.37), so that etcd batches
// their writes into as few fsyncs as it can; fewer workers made empty
// starts measurably slower ("strata-bench startup").
const policyWorkers = 160

// ensurePolicy creates or reconciles the bootstrap policy, retrying every
// second for up to 30 seconds, as kube-apiserver's hook does.
func ensurePolicy(ctx context.Context, p *rbacrest.PolicyData, client kubernetes.Interface) error {
	err := wait.PollUntilContextTimeout(ctx, time.Second, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		return ensurePolicyOnce(ctx, p, client), nil
	})
	if err != nil {
		return fmt.Errorf("unable to initialize roles: %w", err)
	}
	return nil
}

// ensurePolicyOnce is one attempt: true once every object is reconciled.
func ensurePolicyOnce(ctx context.Context, p *rbacrest.PolicyData, client kubernetes.Interface) bool {
	rbac := client.RbacV1()
	// Make sure etcd is responding before reconciling.
	if _, err := rbac.ClusterRoles().List(ctx, metav1.ListOptions{}); err != nil {
		klog.Errorf("unable to initialize clusterroles: %v", err)
		return false
	}
	if _, err := rbac.ClusterRoleBindings().List(ctx, metav1.ListOptions{}); err != nil {
		klog.Errorf("unable to initialize clusterrolebindings: %v", err)
		return false
	}
	if err := primeAggregatedClusterRoles(ctx, p.ClusterRolesToAggregate, rbac); err != nil {
		klog.Errorf("unable to prime aggregated clusterroles: %v", err)
		return false
	}
	if err := primeSplitClusterRoleBindings(ctx, p.ClusterRoleBindingsToSplit, rbac); err != nil {
		klog.Errorf("unable to prime split ClusterRoleBindings: %v", err)
		return false
	}
	return runAll(policyTasks(p, client), policyWorkers)
}

// policyTask reconciles one object of the policy; it logs its own failure.
type policyTask func() error

// policyTasks are the reconciliations of every object of the policy.
func policyTasks(p *rbacrest.PolicyData, client kubernetes.Interface) []policyTask {
	rbac, namespaces := client.RbacV1(), client.CoreV1().Namespaces()
	var tasks []policyTask
	// Each task has a copy of its object, as each of the hook's loop
	// iterations has.
	for i := range p.ClusterRoles {
		r := p.ClusterRoles[i].DeepCopy()
		o := reconciliation.ReconcileRoleOptions{Role: reconciliation.ClusterRoleRuleOwner{ClusterRole: r},
			Client: reconciliation.ClusterRoleModifier{Client: rbac.ClusterRoles()}, Confirm: true}
		tasks = append(tasks, roleTask(o, "clusterrole", r.Name, ""))
	}
	for i := range p.ClusterRoleBindings {
		b := p.ClusterRoleBindings[i].DeepCopy()
		o := reconciliation.ReconcileRoleBindingOptions{RoleBinding: reconciliation.ClusterRoleBindingAdapter{ClusterRoleBinding: b},
			Client: reconciliation.ClusterRoleBindingClientAdapter{Client: rbac.ClusterRoleBindings()}, Confirm: true}
		tasks = append(tasks, bindingTask(o, "clusterrolebinding", b.Name, ""))
	}
	for ns, roles := range p.Roles {
		for i := range roles {
			r := roles[i].DeepCopy()
			o := reconciliation.ReconcileRoleOptions{Role: reconciliation.RoleRuleOwner{Role: r},
				Client: reconciliation.RoleModifier{Client: rbac, NamespaceClient: namespaces}, Confirm: true}
			tasks = append(tasks, roleTask(o, "role", r.Name, ns))
		}
	}
	for ns, bindings := range p.RoleBindings {
		for i := range bindings {
			b := bindings[i].DeepCopy()
			o := reconciliation.ReconcileRoleBindingOptions{RoleBinding: reconciliation.RoleBindingAdapter{RoleBinding: b},
				Client: reconciliation.RoleBindingClientAdapter{Client: rbac, NamespaceClient: namespaces}, Confirm: true}
			tasks = append(tasks, bindingTask(o, "rolebinding", b.Name, ns))
		}
	}
	return tasks
}

func roleTask(o reconciliation.ReconcileRoleOptions, kind, name, ns string) policyTask {
	return reconcileTask(kind, name, ns, func() error {
		r, err := o.Run()
		if err == nil {
			logReconciled(kind, name, ns, r.Operation, r.Protected, "permissions", r.MissingRules)
		}
		return err
	})
}

func bindingTask(o reconciliation.ReconcileRoleBindingOptions, kind, name, ns string) policyTask {
	return reconcileTask(kind, name, ns, func() error {
		r, err := o.Run()
		if err == nil {
			logReconciled(kind, name, ns, r.Operation, r.Protected, "subjects", r.MissingSubjects)
		}
		return err
	})
}

// reconcileTask runs reconcile, retried as the hook retries, and logs a
// failure as the hook words it.
func reconcileTask(kind, name, ns string, reconcile func() error) policyTask {
	return func() error {
		err := retryConflictOrUnavailable(reconcile)
		if err != nil {
			klog.Errorf("unable to reconcile %s.%s/%s%s: %v", kind, rbacv1.GroupName, name, inNamespace(ns), err)
		}
		return err
	}
}

// retryConflictOrUnavailable retries fn as the hook does: on conflicts and
// on 503s (a server blocked by storage version updates).
func retryConflictOrUnavailable(fn func() error) error {
	return retry.OnError(retry.DefaultBackoff, func(err error) bool {
		return apierrors.IsConflict(err) || apierrors.IsServiceUnavailable(err)
	}, fn)
}

// logReconciled logs a reconciliation as the hook does.
func logReconciled(kind, name, ns string, op reconciliation.ReconcileOperation, protected bool, what string, missing any) {
	switch {
	case protected && op != reconciliation.ReconcileNone:
		klog.Warningf("skipped reconcile-protected %s.%s/%s%s with missing %s: %v", kind, rbacv1.GroupName, name, inNamespace(ns), what, missing)
	case op == reconciliation.ReconcileUpdate:
		klog.V(2).Infof("updated %s.%s/%s%s with additional %s: %v", kind, rbacv1.GroupName, name, inNamespace(ns), what, missing)
	case op == reconciliation.ReconcileCreate, op == reconciliation.ReconcileRecreate:
		klog.V(2).Infof("%sd %s.%s/%s%s", op, kind, rbacv1.GroupName, name, inNamespace(ns))
	}
}

func inNamespace(ns string) string {
	if ns == "" {
		return ""
	}
	return " in " + ns
}

// runAll runs tasks, workers at a time, and says whether all succeeded
// (a failure does not stop the others: as many objects as can be are
// reconciled).
func runAll(tasks []policyTask, workers int) bool {
	ch := make(chan policyTask)
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		failed bool
	)
	for range min(workers, len(tasks)) {
		wg.Go(func() {
			for t := range ch {
				if err := t(); err != nil {
					mu.Lock()
					failed = true
					mu.Unlock()
				}
			}
		})
	}
	for _, t := range tasks {
		ch <- t
	}
	close(ch)
	wg.Wait()
	return !failed
}

// primeAggregatedClusterRoles copies the roles that became aggregated
// roles to their new names, so that changes made to the old ones are
// kept (the hook's step of the same name).
func primeAggregatedClusterRoles(ctx context.Context, toAggregate map[string]string, client rbacclient.ClusterRolesGetter) error {
	for oldName, newName := range toAggregate {
		_, err := client.ClusterRoles().Get(ctx, newName, metav1.GetOptions{})
		if err == nil {
			continue
		}
		if !apierrors.IsNotFound(err) {
			return err
		}
		existing, err := client.ClusterRoles().Get(ctx, oldName, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return err
		}
		if existing.AggregationRule != nil {
			// Already moved to an aggregated role: no custom rules to migrate.
			return nil
		}
		klog.V(1).Infof("migrating %v to %v", existing.Name, newName)
		existing.Name, existing.ResourceVersion = newName, ""
		if _, err := client.ClusterRoles().Create(ctx, existing, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
	}
	return nil
}

// primeSplitClusterRoleBindings creates each split binding that does not
// exist from the subjects, labels and annotations of the binding it was
// split from, if that exists (the hook's step of the same name).
func primeSplitClusterRoleBindings(ctx context.Context, toSplit map[string]rbacv1.ClusterRoleBinding, client rbacclient.ClusterRoleBindingsGetter) error {
	for sourceName, target := range toSplit {
		source, err := client.ClusterRoleBindings().Get(ctx, sourceName, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return err
		}
		_, err = client.ClusterRoleBindings().Get(ctx, target.Name, metav1.GetOptions{})
		if err == nil {
			continue
		}
		if !apierrors.IsNotFound(err) {
			return err
		}
		klog.V(1).Infof("copying subjects, labels, and annotations from ClusterRoleBinding %q to template %q", sourceName, target.Name)
		crb := target.DeepCopy()
		crb.Subjects, crb.Labels, crb.Annotations = source.Subjects, source.Labels, source.Annotations
		if _, err := client.ClusterRoleBindings().Create(ctx, crb, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
	}
	return nil
}
