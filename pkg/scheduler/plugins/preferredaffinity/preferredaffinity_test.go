package preferredaffinity

import (
	"reflect"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/scheduler/framework"
	"github.com/shepherd-io/shepherd/pkg/scheduler/framework/fwtest"
)

func TestScore(t *testing.T) {
	snap := fwtest.Snapshot(t,
		framework.ClusterInfo{Name: "a", Region: "eu", Labels: map[string]string{"tier": "gold"}},
		framework.ClusterInfo{Name: "b", Region: "us", Labels: map[string]string{"tier": "gold"}},
		framework.ClusterInfo{Name: "c", Region: "us", Labels: map[string]string{"tier": "bronze"}},
		framework.ClusterInfo{Name: "d", Region: "eu"},
	)
	pref := func(weight int32, aff policyv1alpha1.ClusterAffinity) policyv1alpha1.WeightedClusterAffinityTerm {
		return policyv1alpha1.WeightedClusterAffinityTerm{Weight: weight, Preference: aff}
	}
	gold := policyv1alpha1.ClusterAffinity{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "gold"}}}
	us := policyv1alpha1.ClusterAffinity{FieldSelector: &policyv1alpha1.FieldSelector{MatchExpressions: []policyv1alpha1.FieldSelectorRequirement{{Key: "region", Operator: "In", Values: []string{"us"}}}}}
	tests := []struct {
		name  string
		terms []policyv1alpha1.WeightedClusterAffinityTerm
		want  map[string]int64
	}{
		{"no terms: skipped", nil, nil},
		{"one positive term", []policyv1alpha1.WeightedClusterAffinityTerm{pref(10, gold)}, map[string]int64{"a": 100, "b": 100, "c": 0, "d": 0}},
		{"sum of terms", []policyv1alpha1.WeightedClusterAffinityTerm{pref(30, gold), pref(10, us)}, map[string]int64{"a": 75, "b": 100, "c": 25, "d": 0}},
		{"negative weight", []policyv1alpha1.WeightedClusterAffinityTerm{pref(-50, us)}, map[string]int64{"a": 100, "b": 0, "c": 0, "d": 100}},
		{"mixed signs", []policyv1alpha1.WeightedClusterAffinityTerm{pref(20, gold), pref(-20, us)}, map[string]int64{"a": 100, "b": 50, "c": 0, "d": 50}},
		{"nobody matches", []policyv1alpha1.WeightedClusterAffinityTerm{pref(5, policyv1alpha1.ClusterAffinity{ClusterNames: []string{"zz"}})}, map[string]int64{"a": 0, "b": 0, "c": 0, "d": 0}},
	}
	p, _ := New(nil)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := &framework.Workload{Placement: &policyv1alpha1.Placement{PreferredClusterAffinities: tt.terms}}
			got, skipped := fwtest.Score(t, p.(framework.ScorePlugin), snap, w)
			if skipped != (tt.want == nil) || (!skipped && !reflect.DeepEqual(got, tt.want)) {
				t.Errorf("got %v (skipped %v), want %v", got, skipped, tt.want)
			}
		})
	}
}
