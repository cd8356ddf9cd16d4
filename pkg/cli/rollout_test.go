package cli

import (
	"bytes"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/rollout"
)

func TestPrintRolloutStatus(t *testing.T) {
	at := &metav1.Time{Time: time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)}
	b := &workv1alpha1.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Name: "web-deployment"}}
	b.Spec.Rollout = &policyv1alpha1.RolloutStrategy{Type: policyv1alpha1.RolloutStaged}
	b.Spec.RolloutControl = &workv1alpha1.RolloutControl{Paused: true}
	b.Status.Rollout = &workv1alpha1.RolloutStatus{
		Revision: "r2", LastGoodRevision: "r1", Phase: workv1alpha1.RolloutPhasePaused, Message: "Paused (spec.rolloutControl.paused)",
		Stages: []workv1alpha1.RolloutStageStatus{{Name: "canary", StartedAt: at, CompletedAt: at}, {Name: "prod"}},
		Clusters: []workv1alpha1.ClusterRolloutStatus{
			{Name: "m1", Stage: "canary", Revision: "r2", UpdatedAt: at, HealthySince: at},
			{Name: "m2", Stage: "prod", Revision: "r1", UpdatedAt: at, Failed: true},
		},
	}
	b.Status.AggregatedStatus = []workv1alpha1.AggregatedStatusItem{{ClusterName: "m1", Health: policyv1alpha1.ResourceHealthy}}
	b.Status.Conditions = []metav1.Condition{{Type: workv1alpha1.ConditionRolloutPaused, Status: metav1.ConditionTrue, Reason: "Paused"}}
	var out bytes.Buffer
	if err := printRolloutStatus(&out, b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"Revision:   r2", "Last good:  r1", "Phase:      Paused", "Paused:     yes (shepherd rollout resume)",
		"canary               done 2026-01-01T12:00:00Z", "prod                 pending",
		"m1       canary  r2 (new)   Healthy", "m2       prod    r1 FAILED  -",
		"Condition:  RolloutPaused (Paused)",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	var all bytes.Buffer
	if err := printRolloutStatus(&all, &workv1alpha1.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Name: "x"}}); err != nil || !strings.Contains(all.String(), "rollout All") {
		t.Fatalf("a binding without a gated rollout: %q, %v", all.String(), err)
	}
}

func TestPrintWaves(t *testing.T) {
	s := &policyv1alpha1.RolloutStrategy{Type: policyv1alpha1.RolloutStaged, MinSuccessSeconds: 30, Stages: []policyv1alpha1.RolloutStage{
		{Name: "canary", Approval: policyv1alpha1.ApprovalBefore}, {Name: "prod"}}}
	waves := rollout.Waves(s, []rollout.Cluster{{Name: "c1", Stages: []int{0}}, {Name: "p1", Stages: []int{1}}, {Name: "p2", Stages: []int{1}}})
	var out bytes.Buffer
	if err := printWaves(&out, s, waves); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Strategy: Staged, 2 waves", "healthy for 30s", "1     canary  approval (Before)  c1", "2     prod    -                  p1, p2"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}
