package scheduler

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"k8s.io/utils/ptr"

	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/scheduler/framework"
)

// TestLimits: equal weights ignore capacity, so without limits
// replicas: 2147483647 would send about 715 million replicas to each of
// three clusters; the limits refuse it with a reason, before and after
// division.
func TestLimits(t *testing.T) {
	snap := snapshot(t, cluster("a", "aws", "r1", "z1", nil), cluster("b", "aws", "r1", "z1", nil), cluster("c", "aws", "r1", "z1", nil))
	equal := &policyv1alpha1.Placement{ReplicaScheduling: divided(policyv1alpha1.ReplicaDivisionPreferenceWeighted)}
	tests := []struct {
		name     string
		limits   Limits
		policy   *policyv1alpha1.ReplicaLimits
		replicas int32
		wantErr  string
	}{
		{name: "no limits: placed", replicas: math.MaxInt32},
		{name: "over the per-workload limit", limits: Limits{MaxReplicasPerWorkload: 1000}, replicas: math.MaxInt32,
			wantErr: "2147483647 replicas are more than the 1000 a workload may have"},
		{name: "over the per-cluster limit after division", limits: Limits{MaxReplicasPerCluster: 100}, replicas: 301,
			wantErr: "sends 101 replicas to cluster a, more than the 100 one cluster may get"},
		{name: "within both", limits: Limits{MaxReplicasPerWorkload: 300, MaxReplicasPerCluster: 100}, replicas: 300},
		{name: "the policy lowers the workload limit", limits: Limits{MaxReplicasPerWorkload: 300}, policy: &policyv1alpha1.ReplicaLimits{MaxReplicas: ptr.To[int32](10)},
			replicas: 11, wantErr: "more than the 10 a workload may have; lower spec.replicas (the limit is the policy's placement.replicaLimits.maxReplicas)"},
		{name: "the policy cannot raise it", limits: Limits{MaxReplicasPerWorkload: 300}, policy: &policyv1alpha1.ReplicaLimits{MaxReplicas: ptr.To[int32](1000)},
			replicas: 301, wantErr: "the controller manager's --max-replicas-per-workload"},
		{name: "the policy's per-cluster limit without a controller one", policy: &policyv1alpha1.ReplicaLimits{MaxReplicasPerCluster: ptr.To[int32](5)},
			replicas: 18, wantErr: "sends 6 replicas to cluster a, more than the 5 one cluster may get"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := NewDefault()
			s.Limits = tt.limits
			p := equal.DeepCopy()
			p.ReplicaLimits = tt.policy
			w := deployment("web", tt.replicas, p)
			w.Request = framework.Resources{} // no requests: capacity does not limit
			res, err := s.Schedule(context.Background(), snap, w)
			defer res.Release()
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			var ue *UnschedulableError
			if !errors.As(err, &ue) || !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), ConstraintReplicaLimit) {
				t.Fatalf("err = %v, want an UnschedulableError containing %q", err, tt.wantErr)
			}
		})
	}
}
