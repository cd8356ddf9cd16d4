package spreadconstraint

import (
	"testing"

	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/scheduler/framework"
	"github.com/shepherd-io/shepherd/pkg/scheduler/framework/fwtest"
)

func TestFilter(t *testing.T) {
	snap := fwtest.Snapshot(t,
		framework.ClusterInfo{Name: "full", Provider: "aws", Region: "r1", Zone: "z1", Labels: map[string]string{"rack": "1"}},
		framework.ClusterInfo{Name: "no-zone", Provider: "aws", Region: "r1"},
		framework.ClusterInfo{Name: "bare"},
	)
	by := func(f policyv1alpha1.SpreadFieldValue) policyv1alpha1.SpreadConstraint {
		return policyv1alpha1.SpreadConstraint{SpreadByField: f, MinGroups: 1}
	}
	static := &policyv1alpha1.ReplicaSchedulingStrategy{
		ReplicaSchedulingType:     policyv1alpha1.ReplicaSchedulingTypeDivided,
		ReplicaDivisionPreference: policyv1alpha1.ReplicaDivisionPreferenceWeighted,
		WeightPreference: &policyv1alpha1.ClusterPreferences{StaticWeightList: []policyv1alpha1.StaticClusterWeight{
			{TargetCluster: policyv1alpha1.ClusterAffinity{ClusterNames: []string{"full"}}, Weight: 1},
		}},
	}
	tests := []struct {
		name        string
		constraints []policyv1alpha1.SpreadConstraint
		strategy    *policyv1alpha1.ReplicaSchedulingStrategy
		want        map[string]string
	}{
		{"none", nil, nil, map[string]string{}},
		{"cluster only", []policyv1alpha1.SpreadConstraint{by("cluster")}, nil, map[string]string{}},
		{"region", []policyv1alpha1.SpreadConstraint{by("cluster"), by("region")}, nil, map[string]string{"bare": "cluster has no region to spread by"}},
		{"zone", []policyv1alpha1.SpreadConstraint{by("zone"), by("cluster")}, nil, map[string]string{
			"no-zone": "cluster has no zone to spread by", "bare": "cluster has no zone to spread by"}},
		{"provider", []policyv1alpha1.SpreadConstraint{by("provider")}, nil, map[string]string{"bare": "cluster has no provider to spread by"}},
		{"label", []policyv1alpha1.SpreadConstraint{{SpreadByLabel: "rack", MinGroups: 1}}, nil, map[string]string{
			"no-zone": `cluster has no label "rack" to spread by`, "bare": `cluster has no label "rack" to spread by`}},
		{"static weights ignore spread", []policyv1alpha1.SpreadConstraint{by("zone")}, static, map[string]string{}},
	}
	p, _ := New(nil)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := &framework.Workload{Placement: &policyv1alpha1.Placement{SpreadConstraints: tt.constraints, ReplicaScheduling: tt.strategy}}
			got := fwtest.Filter(t, p.(framework.FilterPlugin), snap, w)
			for name, st := range got {
				if st.Message() != tt.want[name] {
					t.Errorf("%s: got %q, want %q", name, st.Message(), tt.want[name])
				}
			}
		})
	}
}
