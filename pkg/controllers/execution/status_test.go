package execution

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
)

// TestAppliedCondition: a failure says its kind and wins over ReportDiff
// and held drift, which say so only when nothing failed.
func TestAppliedCondition(t *testing.T) {
	cluster := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "m1"}}
	plain := &workv1alpha1.Work{}
	report := &workv1alpha1.Work{Spec: workv1alpha1.WorkSpec{ApplyStrategy: &policyv1alpha1.ApplyStrategy{Type: policyv1alpha1.ApplyReportDiff}}}
	tests := []struct {
		name         string
		work         *workv1alpha1.Work
		p            pass
		sum          driftSummary
		reason, want string
		status       metav1.ConditionStatus
	}{
		{name: "applied", work: plain, reason: ReasonAppliedSuccessful, want: "success", status: metav1.ConditionTrue},
		{name: "a failure", work: plain, p: pass{failures: []string{"x"}}, reason: ReasonAppliedFailed, want: "failure", status: metav1.ConditionFalse},
		{name: "a conflict", work: plain, p: pass{failures: []string{"x"}, conflicts: 1, refusedNS: 1}, reason: ReasonConflict, want: "conflict", status: metav1.ConditionFalse},
		{name: "a namespace's policy", work: plain, p: pass{failures: []string{"x"}, refusedNS: 1}, reason: ReasonNamespacePolicy, want: "failure", status: metav1.ConditionFalse},
		{name: "an RBAC refusal", work: plain, p: pass{failures: []string{"x"}, refusedRBAC: []string{"Role r"}}, reason: ReasonRBACEscalationForbidden, want: "failure", status: metav1.ConditionFalse},
		{name: "ReportDiff", work: report, reason: workv1alpha1.ReasonReportDiff, want: "reportdiff", status: metav1.ConditionFalse},
		{name: "a failure wins over ReportDiff", work: report, p: pass{failures: []string{"x"}}, reason: ReasonAppliedFailed, want: "failure", status: metav1.ConditionFalse},
		{name: "held drift", work: plain, sum: driftSummary{held: 1}, reason: workv1alpha1.ReasonDriftHeld, want: "held", status: metav1.ConditionFalse},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cond, result := appliedCondition(tt.work, cluster, 2, &tt.p, tt.sum)
			if cond.Reason != tt.reason || result != tt.want || cond.Status != tt.status {
				t.Fatalf("appliedCondition = %s %s (%s), want %s %s (%s)", cond.Status, cond.Reason, result, tt.status, tt.reason, tt.want)
			}
		})
	}
}
