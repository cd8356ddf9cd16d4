package rollout

import (
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
)

func TestWaves(t *testing.T) {
	five := []Cluster{{Name: "m5"}, {Name: "m1"}, {Name: "m3"}, {Name: "m2"}, {Name: "m4"}}
	st := staged(stage("canary", policyv1alpha1.ApprovalBefore, 0), stage("prod", policyv1alpha1.ApprovalAfter, 60), stage("late", policyv1alpha1.ApprovalNone, 0))
	stagedFleet := []Cluster{{Name: "c1", Stages: []int{0}}, {Name: "p2", Stages: []int{1}}, {Name: "p1", Stages: []int{1}}, {Name: "x1"}, {Name: "l1", Stages: []int{2}}, {Name: "both", Stages: []int{0, 1}}}
	withConc := staged(stage("canary", policyv1alpha1.ApprovalNone, 0), stage("prod", policyv1alpha1.ApprovalNone, 0))
	withConc.MaxConcurrency = ptr.To(intstr.FromInt32(1))
	cases := []struct {
		name     string
		s        *policyv1alpha1.RolloutStrategy
		clusters []Cluster
		want     string
	}{
		{"All: one wave", nil, five, "[{ [m1 m2 m3 m4 m5]  0}]"},
		{"Progressive, one at a time by name", progressive(intstr.FromInt32(1), 0), five, "[{ [m1]  0} { [m2]  0} { [m3]  0} { [m4]  0} { [m5]  0}]"},
		{"Progressive, 40% of five is two", progressive(intstr.FromString("40%"), 0), five, "[{ [m1 m2]  0} { [m3 m4]  0} { [m5]  0}]"},
		{"Staged: approvals and waits on each stage's first wave; unstaged last; overlaps left out", st, stagedFleet,
			"[{canary [c1] Before 0} {prod [p1 p2]  0} {late [l1] After 60} {(unstaged) [x1]  0}]"},
		{"Staged with maxConcurrency", withConc, []Cluster{{Name: "a", Stages: []int{0}}, {Name: "b", Stages: []int{1}}, {Name: "c", Stages: []int{1}}},
			"[{canary [a]  0} {prod [b]  0} {prod [c]  0}]"},
	}
	for _, tc := range cases {
		if got := fmt.Sprint(Waves(tc.s, tc.clusters)); got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, got, tc.want)
		}
	}
}

func TestSelectors(t *testing.T) {
	s := staged(stage("canary", policyv1alpha1.ApprovalNone, 0), stage("eu", policyv1alpha1.ApprovalNone, 0))
	s.Stages[0].ClusterSelector = metav1.LabelSelector{MatchLabels: map[string]string{"ring": "canary"}}
	s.Stages[1].ClusterSelector = metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "region", Operator: metav1.LabelSelectorOpIn, Values: []string{"eu"}}}}
	sel, err := Selectors(s)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		labels map[string]string
		want   string
	}{
		{map[string]string{"ring": "canary"}, "[0]"},
		{map[string]string{"region": "eu"}, "[1]"},
		{map[string]string{"ring": "canary", "region": "eu"}, "[0 1]"},
		{nil, "[]"},
	} {
		if got := fmt.Sprint(sel.Of(tc.labels)); got != tc.want {
			t.Errorf("%v: stages %s, want %s", tc.labels, got, tc.want)
		}
	}
	s.Stages[1].ClusterSelector.MatchExpressions[0].Operator = "Near"
	if _, err := Selectors(s); err == nil || !strings.Contains(err.Error(), "spec.rollout.stages[1].clusterSelector") {
		t.Fatalf("a bad operator: %v", err)
	}
	if sel, err := Selectors(progressive(intstr.FromInt32(1), 0)); sel != nil || err != nil {
		t.Fatalf("a Progressive rollout has no stage selectors: %v %v", sel, err)
	}
}
