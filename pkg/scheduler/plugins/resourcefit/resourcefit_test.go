package resourcefit

import (
	"testing"

	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/scheduler/framework"
	"github.com/shepherd-io/shepherd/pkg/scheduler/framework/fwtest"
)

const mi = 1 << 20

func TestFilter(t *testing.T) {
	gpu := framework.ScalarResource{Name: "nvidia.com/gpu", Value: 2}
	snap := fwtest.Snapshot(t,
		framework.ClusterInfo{Name: "big", Available: framework.Resources{MilliCPU: 10000, Memory: 10240 * mi, Pods: 100, Scalars: []framework.ScalarResource{gpu}}},
		framework.ClusterInfo{Name: "cpu-short", Available: framework.Resources{MilliCPU: 1500, Memory: 10240 * mi, Pods: 100}},
		framework.ClusterInfo{Name: "mem-short", Available: framework.Resources{MilliCPU: 10000, Memory: 512 * mi, Pods: 100}},
		framework.ClusterInfo{Name: "pods-short", Available: framework.Resources{MilliCPU: 10000, Memory: 10240 * mi, Pods: 2}},
		framework.ClusterInfo{Name: "empty"},
		// Nine free CPUs in all, but 1.5 on each of six nodes.
		framework.ClusterInfo{Name: "fragmented", Available: framework.Resources{MilliCPU: 9000, Memory: 10240 * mi, Pods: 100},
			Nodes: []framework.NodeRoom{{Count: 6, Free: framework.Resources{MilliCPU: 1500, Memory: 10240 * mi, Pods: 20}}}},
	)
	req := framework.Resources{MilliCPU: 1000, Memory: 1024 * mi}
	divided := func(pref policyv1alpha1.ReplicaDivisionPreference, w *policyv1alpha1.ClusterPreferences) *policyv1alpha1.Placement {
		return &policyv1alpha1.Placement{ReplicaScheduling: &policyv1alpha1.ReplicaSchedulingStrategy{
			ReplicaSchedulingType: policyv1alpha1.ReplicaSchedulingTypeDivided, ReplicaDivisionPreference: pref, WeightPreference: w}}
	}
	aggregated := divided(policyv1alpha1.ReplicaDivisionPreferenceAggregated, nil)
	dynamic := divided(policyv1alpha1.ReplicaDivisionPreferenceWeighted, &policyv1alpha1.ClusterPreferences{DynamicWeight: policyv1alpha1.DynamicWeightByAvailableReplicas})
	tests := []struct {
		name      string
		replicas  int32
		req       framework.Resources
		placement *policyv1alpha1.Placement
		previous  []workv1alpha1.TargetCluster
		want      map[string]string
	}{
		{"duplicated needs all replicas", 3, req, nil, nil, map[string]string{
			"cpu-short":  "insufficient cpu for all replicas",
			"mem-short":  "insufficient memory for all replicas",
			"pods-short": "insufficient pods for all replicas",
			"empty":      "insufficient pods for all replicas",
		}},
		{"aggregated needs one replica", 3, req, aggregated, nil, map[string]string{
			"mem-short": "insufficient memory for one replica",
			"empty":     "insufficient pods for one replica",
		}},
		{"dynamic weights need one replica", 3, req, dynamic, nil, map[string]string{
			"mem-short": "insufficient memory for one replica",
			"empty":     "insufficient pods for one replica",
		}},
		{"static or equal weights ignore room", 3, req, divided(policyv1alpha1.ReplicaDivisionPreferenceWeighted, nil), nil, map[string]string{}},
		{"replicas already there count as room", 3, req, nil, []workv1alpha1.TargetCluster{{Name: "cpu-short", Replicas: 3}, {Name: "pods-short", Replicas: 1}}, map[string]string{
			"mem-short": "insufficient memory for all replicas",
			"empty":     "insufficient pods for all replicas",
		}},
		{"no request: no resource model", 3, framework.Resources{}, nil, nil, map[string]string{}},
		{"no replicas", 0, req, nil, nil, map[string]string{}},
		{"extended resource", 1, framework.Resources{Scalars: []framework.ScalarResource{{Name: "nvidia.com/gpu", Value: 1}}}, nil, nil, map[string]string{
			"cpu-short":  "insufficient nvidia.com/gpu for one replica",
			"mem-short":  "insufficient nvidia.com/gpu for one replica",
			"pods-short": "insufficient nvidia.com/gpu for one replica",
			"empty":      "insufficient pods for one replica",
			"fragmented": "insufficient nvidia.com/gpu for one replica",
		}},
		{"a replica never spans nodes", 7, req, nil, nil, map[string]string{
			"cpu-short":  "insufficient cpu for all replicas",
			"mem-short":  "insufficient memory for all replicas",
			"pods-short": "insufficient pods for all replicas",
			"empty":      "insufficient pods for all replicas",
			"fragmented": "insufficient room on any one node for all replicas",
		}},
	}
	p, _ := New(nil)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := &framework.Workload{Replicas: tt.replicas, Request: tt.req, Placement: tt.placement, Previous: tt.previous}
			got := fwtest.Filter(t, p.(framework.FilterPlugin), snap, w)
			for name, st := range got {
				if st.Message() != tt.want[name] {
					t.Errorf("%s: got %q, want %q", name, st.Message(), tt.want[name])
				}
			}
		})
	}
}
