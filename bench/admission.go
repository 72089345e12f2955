package bench

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/stratadev/strata/admission"
	"github.com/stratadev/strata/bench/internal/cell"
	"github.com/stratadev/strata/bench/internal/servers"
)

// The admission cells: creates of ConfigMaps through kube-apiserver's
// default admission chain, beside the same creates through a second
// server on the same etcd with every default plugin disabled
// (--disable-admission-plugins listing them all, NamespaceLifecycle
// included); then, in a namespace a ValidatingAdmissionPolicy of three
// CEL expressions is bound to, beside the admission-off server again.
// Each pair runs on its own, so that the default chain is measured with
// no policy at all (the policy is created by the second pair's
// preparation).

// vapNamespace is where the policy applies; vapName names the policy and
// its binding.
const (
	vapNamespace = "strata-bench-vap"
	vapName      = "strata-bench"
)

// createIn creates ConfigMaps in ns through the clientset cs returns,
// named apart by who.
func (r *runner) createIn(cs func() kubernetes.Interface, ns, who string) func(context.Context, cell.Call) error {
	return func(ctx context.Context, c cell.Call) error {
		_, err := cs().CoreV1().ConfigMaps(ns).Create(ctx, r.configMap(fmt.Sprintf("create-%s-c%d-%d", who, c.Conc, c.I)),
			metav1.CreateOptions{})
		return err
	}
}

// offSettle is how long the admission servers are left alone after they
// start: its start-up work (the informers' lists, the garbage
// collector's graph of every object) would otherwise slow the first
// pair's cells, both sides, as the server shares the process.
const offSettle = 10 * time.Second

// prepareAdmissionServers starts the admission cells' two servers (once,
// child processes on strata's etcd; the second with every default plugin
// disabled) and lets them settle.
func (r *runner) prepareAdmissionServers(ctx context.Context) error {
	e := r.env
	if e.admissionOff != nil {
		return nil
	}
	for _, off := range []bool{false, true} {
		name, spec := "strata-admission-on", servers.Spec{Mode: servers.ModeStrata, EtcdServers: e.etcd.Endpoints, Controllers: e.controllers}
		if off {
			name, spec.DisableAdmission = "strata-admission-off", strings.Split(admission.DefaultOn(), ", ")
		}
		spec.DataDir = filepath.Join(e.tmp, name)
		p, rc, err := servers.StartStrataChild(ctx, spec, filepath.Join(e.tmp, name+".log"))
		if err != nil {
			return err
		}
		e.admissionProcs = append(e.admissionProcs, p)
		t, err := newTarget(sideStrata, rc, p.Pid())
		if err != nil {
			return err
		}
		if off {
			e.admissionOff = t
		} else {
			e.admissionOn = t
		}
	}
	select {
	case <-time.After(offSettle):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// createPolicy creates the namespace, the policy (three expressions every
// created ConfigMap passes) and its binding to the namespace, and waits
// until the policy denies a ConfigMap without the bench's label.
func (r *runner) createPolicy(ctx context.Context, cs kubernetes.Interface) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: vapNamespace}}
	if _, err := cs.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("bench: creating namespace %s: %w", vapNamespace, err)
	}
	api := cs.AdmissionregistrationV1()
	if _, err := api.ValidatingAdmissionPolicies().Create(ctx, benchPolicy(), metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("bench: creating the ValidatingAdmissionPolicy: %w", err)
	}
	binding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{ObjectMeta: metav1.ObjectMeta{Name: vapName},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: vapName,
			ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny},
			MatchResources: &admissionregistrationv1.MatchResources{NamespaceSelector: &metav1.LabelSelector{
				MatchLabels: map[string]string{corev1.LabelMetadataName: vapNamespace}}}}}
	if _, err := api.ValidatingAdmissionPolicyBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("bench: creating the ValidatingAdmissionPolicyBinding: %w", err)
	}
	unlabelled := r.configMap("unlabelled")
	unlabelled.Labels = nil
	dryRun := metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}
	deadline := time.Now().Add(listTimeout)
	for {
		_, err := cs.CoreV1().ConfigMaps(vapNamespace).Create(ctx, unlabelled, dryRun)
		if apierrors.IsInvalid(err) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("bench: the ValidatingAdmissionPolicy does not deny after %s (last: %v)", listTimeout, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// benchPolicy checks ConfigMap creates with three expressions: a name
// length, a key count and the bench's label.
func benchPolicy() *admissionregistrationv1.ValidatingAdmissionPolicy {
	return &admissionregistrationv1.ValidatingAdmissionPolicy{ObjectMeta: metav1.ObjectMeta{Name: vapName},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionregistrationv1.RuleWithOperations{
					Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
					Rule: admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"},
						Resources: []string{"configmaps"}}}}}},
			Validations: []admissionregistrationv1.Validation{
				{Expression: "object.metadata.name.size() <= 63", Message: "name too long"},
				{Expression: "!has(object.data) || object.data.size() <= 16", Message: "too many keys"},
				{Expression: "has(object.metadata.labels) && object.metadata.labels['app'] == 'strata-bench'", Message: "not the bench's"},
			}}}
}
