package registry

import (
	"fmt"
	"testing"
	"time"

	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestCheckAndDecrement runs every branch of upstream's checkAndDecrement
// as CheckAndDecrement words it: code, message and the DisruptionBudget
// cause, and the budget's status after a disruption is taken.
func TestCheckAndDecrement(t *testing.T) {
	tooMany := map[string]metav1.Time{}
	for i := 0; i <= MaxDisruptedPodSize; i++ {
		tooMany[fmt.Sprintf("p%d", i)] = metav1.Now()
	}
	syncFailed := []metav1.Condition{{Type: policyv1.DisruptionAllowedCondition, Status: metav1.ConditionFalse,
		Reason: policyv1.SyncFailedReason, Message: "found no controllers"}}
	const violate = "Cannot evict pod as it would violate the pod's disruption budget."
	tests := []struct {
		name    string
		gen     int64
		status  policyv1.PodDisruptionBudgetStatus
		dryRun  bool
		code    int32
		message string
		cause   string
	}{
		{name: "not observed", gen: 2, status: policyv1.PodDisruptionBudgetStatus{ObservedGeneration: 1, DisruptionsAllowed: 1},
			code: 429, message: violate, cause: "The disruption budget b is still being processed by the server."},
		{name: "negative", status: policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: -1},
			code: 403, message: `poddisruptionbudget.policy "b" is forbidden: pdb disruptions allowed is negative`,
			cause: "The disruption budget b does not allow evicting pods currently: pdb disruptions allowed is negative"},
		{name: "too many disrupted", status: policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: 1, DisruptedPods: tooMany},
			code: 403, message: `poddisruptionbudget.policy "b" is forbidden: DisruptedPods map too big - too many evictions not confirmed by PDB controller`,
			cause: "The disruption budget b does not allow evicting pods currently: too many pending evictions not confirmed by PDB controller"},
		{name: "sync failed", status: policyv1.PodDisruptionBudgetStatus{Conditions: syncFailed, CurrentHealthy: 3, DesiredHealthy: 1},
			code: 429, message: violate,
			cause: "The disruption budget b does not allow evicting pods currently because it failed sync: found no controllers"},
		{name: "not enough healthy", status: policyv1.PodDisruptionBudgetStatus{CurrentHealthy: 2, DesiredHealthy: 2},
			code: 429, message: violate, cause: "The disruption budget b needs 2 healthy pods and has 2 currently"},
		{name: "none allowed", status: policyv1.PodDisruptionBudgetStatus{CurrentHealthy: 3, DesiredHealthy: 2},
			code: 429, message: violate, cause: "The disruption budget b does not allow evicting pods currently"},
		{name: "allowed", status: policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: 1}},
		{name: "allowed, dry run", status: policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: 2}, dryRun: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pdb := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "b", Generation: tc.gen}, Status: tc.status}
			before := pdb.Status.DisruptionsAllowed
			err := CheckAndDecrement("p", pdb, tc.dryRun, time.Now())
			if tc.code == 0 {
				if err != nil {
					t.Fatal(err)
				}
				_, recorded := pdb.Status.DisruptedPods["p"]
				if pdb.Status.DisruptionsAllowed != before-1 || recorded == tc.dryRun {
					t.Errorf("status after: %+v", pdb.Status)
				}
				return
			}
			status, ok := err.(apierrors.APIStatus)
			if !ok {
				t.Fatalf("error %v is not a Status", err)
			}
			s := status.Status()
			if s.Code != tc.code || s.Message != tc.message || s.Details == nil || len(s.Details.Causes) != 1 ||
				s.Details.Causes[0].Type != policyv1.DisruptionBudgetCause || s.Details.Causes[0].Message != tc.cause {
				t.Errorf("got %d %q %+v\nwant %d %q cause %q", s.Code, s.Message, s.Details, tc.code, tc.message, tc.cause)
			}
		})
	}
}
