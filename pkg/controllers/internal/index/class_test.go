package index

import (
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
)

func TestClasses(t *testing.T) {
	scheduled := workv1alpha1.BindingStatus{Conditions: []metav1.Condition{{Type: workv1alpha1.ConditionScheduled, Status: metav1.ConditionTrue}}}
	notScheduled := workv1alpha1.BindingStatus{Conditions: []metav1.Condition{{Type: workv1alpha1.ConditionScheduled, Status: metav1.ConditionFalse}}}
	divided := &policyv1alpha1.Placement{ReplicaScheduling: &policyv1alpha1.ReplicaSchedulingStrategy{ReplicaSchedulingType: policyv1alpha1.ReplicaSchedulingTypeDivided}}
	maxOne := int32(1)
	spreadLimited := &policyv1alpha1.Placement{SpreadConstraints: []policyv1alpha1.SpreadConstraint{{SpreadByField: policyv1alpha1.SpreadByFieldRegion, MaxGroups: &maxOne}}}
	overflowing := divided.DeepCopy()
	overflowing.ClusterAffinities = []policyv1alpha1.ClusterAffinityTerm{{AffinityName: "primary",
		OverflowAffinities: []policyv1alpha1.OverflowClusterAffinity{{AffinityName: "burst"}}}}
	for _, tc := range []struct {
		name string
		got  []string
		want []string
	}{
		{"a duplicated binding, scheduled", classes(&workv1alpha1.ResourceBinding{Status: scheduled}),
			[]string{ClassEverywhere}},
		{"a duplicated binding never scheduled", classes(&workv1alpha1.ClusterResourceBinding{}),
			[]string{ClassEverywhere, ClassRetry}},
		{"a duplicated binding limited to one region, scheduled", classes(&workv1alpha1.ResourceBinding{
			Spec: workv1alpha1.BindingSpec{Placement: spreadLimited}, Status: scheduled}), nil},
		{"a divided binding whose scheduling failed", classes(&workv1alpha1.ResourceBinding{
			Spec: workv1alpha1.BindingSpec{Replicas: 3, Placement: divided}, Status: notScheduled}),
			[]string{ClassRetry}},
		{"a divided binding that may overflow, scheduled", classes(&workv1alpha1.ResourceBinding{
			Spec: workv1alpha1.BindingSpec{Replicas: 3, Placement: overflowing}, Status: scheduled}),
			[]string{ClassOverflow}},
	} {
		if !slices.Equal(tc.got, tc.want) {
			t.Errorf("%s: keys %v, want %v", tc.name, tc.got, tc.want)
		}
	}
}
