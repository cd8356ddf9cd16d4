package execution

import (
	"errors"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
)

// TestDriftConditionAfterARefusedWrite: an apply puts a drift back and its
// status write is refused because another controller wrote the Work
// first; the pass that retries finds the member matching. The condition
// must still say the apply overwrote the drift, not that the member's
// edit was undone.
func TestDriftConditionAfterARefusedWrite(t *testing.T) {
	detected := metav1.Condition{Type: workv1alpha1.WorkConditionDrifted, Status: metav1.ConditionTrue, Reason: workv1alpha1.ReasonDriftDetected}
	put := driftSummary{overwritten: []string{"Deployment shop/web: spec.replicas: member 4, hub 1"}}
	conflict := errors.New("the object has been modified")
	cases := []struct {
		name string
		// first is the pass whose write ends in firstErr; then a retry of
		// generation retryGen finds retry.
		first      driftSummary
		firstErr   error
		retryGen   int64
		retry      driftSummary
		wantReason string
		wantStatus metav1.ConditionStatus
	}{
		{name: "refused write, retry of the same generation", first: put, firstErr: conflict, retryGen: 2,
			wantReason: workv1alpha1.ReasonDriftOverwritten, wantStatus: metav1.ConditionFalse},
		{name: "written, then a member edit undone", first: put, retryGen: 2,
			wantReason: workv1alpha1.ReasonDriftResolved, wantStatus: metav1.ConditionFalse},
		{name: "refused write, the Work changed since", first: put, firstErr: conflict, retryGen: 3,
			wantReason: workv1alpha1.ReasonDriftResolved, wantStatus: metav1.ConditionFalse},
		{name: "refused write, drifted again", first: put, firstErr: conflict, retryGen: 2,
			retry:      driftSummary{drifted: []string{"Deployment shop/web drifted"}},
			wantReason: workv1alpha1.ReasonDriftDetected, wantStatus: metav1.ConditionTrue},
		{name: "refused write of a pass that put nothing back", firstErr: conflict, retryGen: 2,
			wantReason: workv1alpha1.ReasonDriftResolved, wantStatus: metav1.ConditionFalse},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var lost lostOverwrites
			lost.settle("ns/w", 2, lost.carry("ns/w", 2, tc.first), tc.firstErr)
			// The refused write left the Work's condition as it was.
			work := &workv1alpha1.Work{}
			work.Generation = tc.retryGen
			meta.SetStatusCondition(&work.Status.Conditions, detected)
			sum := lost.carry("ns/w", tc.retryGen, tc.retry)
			c, changed := driftCondition(work, sum)
			if c == nil || c.Reason != tc.wantReason || c.Status != tc.wantStatus {
				t.Fatalf("Drifted %+v, want %s %s", c, tc.wantStatus, tc.wantReason)
			}
			if !changed && tc.wantReason != workv1alpha1.ReasonDriftDetected {
				t.Errorf("the condition did not change from %s", detected.Reason)
			}
			lost.settle("ns/w", tc.retryGen, sum, nil)
			if _, ok := lost.Load("ns/w"); ok {
				t.Errorf("a written pass left its overwrites behind")
			}
		})
	}
}

// TestEditedSince: the Work status changes that bring a Work back for a
// drift check at once: a member generation past the applied one, and, for
// a kind without a generation (a ConfigMap), an observed resourceVersion
// other than the one Shepherd's own apply left; each once, not again while
// it stays the same, and never for Shepherd's own write.
func TestEditedSince(t *testing.T) {
	deploy := workv1alpha1.ResourceIdentifier{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "shop", Name: "web"}
	cm := workv1alpha1.ResourceIdentifier{Version: "v1", Kind: "ConfigMap", Namespace: "shop", Name: "cfg"}
	gen := func(g, applied int64) workv1alpha1.ManifestStatus {
		return workv1alpha1.ManifestStatus{Identifier: deploy, Generation: g, AppliedGeneration: applied}
	}
	rv := func(observed, applied string) workv1alpha1.ManifestStatus {
		return workv1alpha1.ManifestStatus{Identifier: cm, ResourceVersion: observed, AppliedResourceVersion: applied}
	}
	for _, tc := range []struct {
		name        string
		before, now workv1alpha1.ManifestStatus
		want        bool
	}{
		{"a Deployment's spec edited", gen(2, 2), gen(3, 2), true},
		{"the same edit seen again", gen(3, 2), gen(3, 2), false},
		{"Shepherd's own apply", gen(2, 2), gen(3, 3), false},
		{"a ConfigMap edited in the member", rv("10", "10"), rv("11", "10"), true},
		{"the same edit seen again", rv("11", "10"), rv("11", "10"), false},
		{"Shepherd's own apply of a ConfigMap", rv("10", "10"), rv("12", "12"), false},
		{"written before Works recorded resourceVersions", rv("10", ""), rv("11", ""), false},
		{"a Deployment deleted in the member", gen(2, 2), gen(0, 2), true},
		{"a ConfigMap deleted in the member", rv("10", "10"), rv("", "10"), true},
		{"the deletion seen again", rv("", "10"), rv("", "10"), false},
		{"never applied, not there", workv1alpha1.ManifestStatus{Identifier: cm}, workv1alpha1.ManifestStatus{Identifier: cm}, false},
		{"gone before Shepherd recorded its apply", rv("10", ""), rv("", ""), false},
	} {
		if got := editedSince([]workv1alpha1.ManifestStatus{tc.before}, []workv1alpha1.ManifestStatus{tc.now}); got != tc.want {
			t.Errorf("%s: editedSince = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestRevertIn: only a drift reported under whenToApply Always is put
// back, the delay after it was first reported.
func TestRevertIn(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	cond := func(status metav1.ConditionStatus, reason string, ago time.Duration) []metav1.Condition {
		return []metav1.Condition{{Type: workv1alpha1.WorkConditionDrifted, Status: status, Reason: reason, LastTransitionTime: metav1.NewTime(now.Add(-ago))}}
	}
	const delay = 30 * time.Second
	for _, tc := range []struct {
		name       string
		conditions []metav1.Condition
		wantWait   time.Duration
		wantRevert bool
	}{
		{name: "no drift", conditions: nil},
		{name: "just reported", conditions: cond(metav1.ConditionTrue, workv1alpha1.ReasonDriftDetected, 0), wantWait: delay, wantRevert: true},
		{name: "reported 10 s ago", conditions: cond(metav1.ConditionTrue, workv1alpha1.ReasonDriftDetected, 10*time.Second), wantWait: 20 * time.Second, wantRevert: true},
		{name: "due", conditions: cond(metav1.ConditionTrue, workv1alpha1.ReasonDriftDetected, delay), wantWait: 0, wantRevert: true},
		{name: "overdue (after a restart)", conditions: cond(metav1.ConditionTrue, workv1alpha1.ReasonDriftDetected, time.Hour), wantWait: 0, wantRevert: true},
		{name: "held under IfNotDrifted", conditions: cond(metav1.ConditionTrue, workv1alpha1.ReasonDriftHeld, time.Hour)},
		{name: "put back already", conditions: cond(metav1.ConditionFalse, workv1alpha1.ReasonDriftOverwritten, time.Hour)},
		{name: "resolved", conditions: cond(metav1.ConditionFalse, workv1alpha1.ReasonDriftResolved, time.Hour)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wait, revert := revertIn(tc.conditions, delay, now)
			if wait != tc.wantWait || revert != tc.wantRevert {
				t.Errorf("revertIn = %s, %v; want %s, %v", wait, revert, tc.wantWait, tc.wantRevert)
			}
		})
	}
}
