package scheduler

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/scheduler/framework"
)

var testNow = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

const gib = 1 << 30

// cluster is a ready, probed cluster serving Deployments with room for 100
// one-cpu, one-GiB replicas.
func cluster(name, provider, region, zone string, labels map[string]string) framework.ClusterInfo {
	return framework.ClusterInfo{
		Name: name, Provider: provider, Region: region, Zone: zone, Labels: labels,
		APIs:      []string{"apps/v1/Deployment", "v1/ConfigMap"},
		Available: framework.Resources{MilliCPU: 100_000, Memory: 100 * gib, Pods: 110},
		Ready:     metav1.ConditionTrue, Probed: true,
	}
}

func snapshot(t testing.TB, clusters ...framework.ClusterInfo) *framework.Snapshot {
	t.Helper()
	snap, err := framework.NewSnapshot(clusters)
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

// deployment is a Deployment of one-cpu, one-GiB replicas.
func deployment(name string, replicas int32, p *policyv1alpha1.Placement) *framework.Workload {
	return &framework.Workload{
		Namespace: "default", Name: name, APIVersion: "apps/v1", Kind: "Deployment",
		Replicas: replicas, Request: framework.Resources{MilliCPU: 1000, Memory: gib},
		Placement: p, Now: testNow,
	}
}

func divided(pref policyv1alpha1.ReplicaDivisionPreference) *policyv1alpha1.ReplicaSchedulingStrategy {
	return &policyv1alpha1.ReplicaSchedulingStrategy{ReplicaSchedulingType: policyv1alpha1.ReplicaSchedulingTypeDivided, ReplicaDivisionPreference: pref}
}

// randomFleet builds a fleet of 1..40 clusters with random topology,
// labels, taints, APIs and room, from r.
func randomFleet(r *rand.Rand) []framework.ClusterInfo {
	n := 1 + r.IntN(40)
	out := make([]framework.ClusterInfo, n)
	for i := range out {
		c := cluster(fmt.Sprintf("c%02d", i), pick(r, "aws", "gcp", "", "azure"), pick(r, "r1", "r2", "r3", ""), pick(r, "z1", "z2", "z3", "z4", ""),
			map[string]string{"env": pick(r, "prod", "dev"), "tier": pick(r, "gold", "silver", "bronze")})
		if r.IntN(5) == 0 {
			c.Taints = []corev1.Taint{{Key: pick(r, "maintenance", "dedicated"), Value: "true", Effect: corev1.TaintEffect(pick(r, "NoSchedule", "NoExecute"))}}
		}
		if r.IntN(6) == 0 {
			c.APIs = []string{"batch/v1/Job"}
		}
		if r.IntN(8) == 0 {
			c.Probed, c.APIs = false, nil
		}
		c.Available = framework.Resources{MilliCPU: int64(r.IntN(50_000)), Memory: int64(r.IntN(64)) * gib, Pods: int64(r.IntN(120))}
		out[i] = c
	}
	return out
}

// randomPlacement builds a placement with a random mix of every feature.
func randomPlacement(r *rand.Rand, names []string) *policyv1alpha1.Placement {
	p := &policyv1alpha1.Placement{}
	aff := func() policyv1alpha1.ClusterAffinity {
		var a policyv1alpha1.ClusterAffinity
		if r.IntN(3) == 0 {
			a.LabelSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"env": pick(r, "prod", "dev")}}
		}
		if r.IntN(4) == 0 {
			a.FieldSelector = &policyv1alpha1.FieldSelector{MatchExpressions: []policyv1alpha1.FieldSelectorRequirement{
				{Key: pick(r, "provider", "region", "zone"), Operator: corev1.NodeSelectorOperator(pick(r, "In", "NotIn", "Exists", "DoesNotExist")), Values: []string{pick(r, "aws", "r1", "z2")}}}}
			if op := a.FieldSelector.MatchExpressions[0].Operator; op == "Exists" || op == "DoesNotExist" {
				a.FieldSelector.MatchExpressions[0].Values = nil
			}
		}
		if r.IntN(4) == 0 {
			a.ClusterNames = sample(r, names)
		}
		if r.IntN(4) == 0 {
			a.Exclude = sample(r, names)
		}
		return a
	}
	switch r.IntN(3) {
	case 0:
		a := aff()
		p.ClusterAffinity = &a
	case 1:
		for i := range 1 + r.IntN(3) {
			p.ClusterAffinities = append(p.ClusterAffinities, policyv1alpha1.ClusterAffinityTerm{AffinityName: fmt.Sprintf("t%d", i), ClusterAffinity: aff()})
		}
	}
	if r.IntN(2) == 0 {
		p.ClusterTolerations = []corev1.Toleration{{Key: "maintenance", Operator: corev1.TolerationOpExists}}
	}
	if r.IntN(3) == 0 {
		p.PreferredClusterAffinities = []policyv1alpha1.WeightedClusterAffinityTerm{{Weight: int32(r.IntN(201) - 100), Preference: aff()}}
	}
	if r.IntN(2) == 0 {
		hi := int32(1 + r.IntN(6))
		p.SpreadConstraints = append(p.SpreadConstraints, policyv1alpha1.SpreadConstraint{SpreadByField: "cluster", MinGroups: 1 + int32(r.IntN(int(hi))), MaxGroups: &hi})
		if r.IntN(2) == 0 {
			gmax := int32(1 + r.IntN(3))
			p.SpreadConstraints = append(p.SpreadConstraints, policyv1alpha1.SpreadConstraint{
				SpreadByField: policyv1alpha1.SpreadFieldValue(pick(r, "region", "zone", "provider")), MinGroups: 1 + int32(r.IntN(int(gmax))), MaxGroups: &gmax})
		}
	}
	switch r.IntN(5) {
	case 0:
		p.ReplicaScheduling = nil // Duplicated
	case 1:
		p.ReplicaScheduling = divided(policyv1alpha1.ReplicaDivisionPreferenceAggregated)
	case 2:
		p.ReplicaScheduling = divided(policyv1alpha1.ReplicaDivisionPreferenceWeighted)
		p.ReplicaScheduling.WeightPreference = &policyv1alpha1.ClusterPreferences{DynamicWeight: policyv1alpha1.DynamicWeightByAvailableReplicas}
	case 3:
		p.ReplicaScheduling = divided(policyv1alpha1.ReplicaDivisionPreferenceWeighted)
		p.ReplicaScheduling.WeightPreference = &policyv1alpha1.ClusterPreferences{StaticWeightList: []policyv1alpha1.StaticClusterWeight{
			{TargetCluster: policyv1alpha1.ClusterAffinity{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "gold"}}}, Weight: 3},
			{TargetCluster: policyv1alpha1.ClusterAffinity{ClusterNames: sample(r, names)}, Weight: 1},
		}}
	case 4:
		p.ReplicaScheduling = divided(policyv1alpha1.ReplicaDivisionPreferenceWeighted)
	}
	return p
}

func pick(r *rand.Rand, values ...string) string { return values[r.IntN(len(values))] }

func sample(r *rand.Rand, names []string) []string {
	var out []string
	for _, n := range names {
		if r.IntN(3) == 0 {
			out = append(out, n)
		}
	}
	return out
}
