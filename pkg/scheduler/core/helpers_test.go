package core

import (
	"fmt"
	"strings"

	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
)

// c builds a candidate from "name/provider/region/zone", a score and room.
func c(path string, score, avail int64) Candidate {
	parts := strings.Split(path, "/")
	for len(parts) < 4 {
		parts = append(parts, "")
	}
	return Candidate{Name: parts[0], Provider: parts[1], Region: parts[2], Zone: parts[3], Score: score, Available: avail}
}

// held marks a candidate as a current target with prev replicas.
func held(cd Candidate, prev int32) Candidate {
	cd.Held, cd.Previous = true, prev
	return cd
}

func labelled(cd Candidate, kv ...string) Candidate {
	cd.Labels = map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		cd.Labels[kv[i]] = kv[i+1]
	}
	return cd
}

func weight(cd Candidate, w int64) Candidate {
	cd.StaticWeight = w
	return cd
}

// Replica scheduling strategies.
var (
	duplicatedRS = &policyv1alpha1.ReplicaSchedulingStrategy{ReplicaSchedulingType: policyv1alpha1.ReplicaSchedulingTypeDuplicated}
	equalRS      = &policyv1alpha1.ReplicaSchedulingStrategy{ReplicaSchedulingType: policyv1alpha1.ReplicaSchedulingTypeDivided,
		ReplicaDivisionPreference: policyv1alpha1.ReplicaDivisionPreferenceWeighted}
	dynamicRS = &policyv1alpha1.ReplicaSchedulingStrategy{ReplicaSchedulingType: policyv1alpha1.ReplicaSchedulingTypeDivided,
		ReplicaDivisionPreference: policyv1alpha1.ReplicaDivisionPreferenceWeighted,
		WeightPreference:          &policyv1alpha1.ClusterPreferences{DynamicWeight: policyv1alpha1.DynamicWeightByAvailableReplicas}}
	aggregatedRS = &policyv1alpha1.ReplicaSchedulingStrategy{ReplicaSchedulingType: policyv1alpha1.ReplicaSchedulingTypeDivided,
		ReplicaDivisionPreference: policyv1alpha1.ReplicaDivisionPreferenceAggregated}
	staticRS = &policyv1alpha1.ReplicaSchedulingStrategy{ReplicaSchedulingType: policyv1alpha1.ReplicaSchedulingTypeDivided,
		ReplicaDivisionPreference: policyv1alpha1.ReplicaDivisionPreferenceWeighted,
		WeightPreference: &policyv1alpha1.ClusterPreferences{StaticWeightList: []policyv1alpha1.StaticClusterWeight{
			{TargetCluster: policyv1alpha1.ClusterAffinity{ClusterNames: []string{"x"}}, Weight: 1}}}}
)

// sc is a spread constraint on a field ("cluster", "region", ...) or, with
// a "label:" prefix, on a label; max 0 means unset.
func sc(key string, lo, hi int32) policyv1alpha1.SpreadConstraint {
	s := policyv1alpha1.SpreadConstraint{MinGroups: lo}
	if k, ok := strings.CutPrefix(key, "label:"); ok {
		s.SpreadByLabel = k
	} else {
		s.SpreadByField = policyv1alpha1.SpreadFieldValue(key)
	}
	if hi > 0 {
		s.MaxGroups = &hi
	}
	return s
}

func req(replicas int32, rs *policyv1alpha1.ReplicaSchedulingStrategy, scs ...policyv1alpha1.SpreadConstraint) Request {
	return Request{Replicas: replicas, Placement: &policyv1alpha1.Placement{ReplicaScheduling: rs, SpreadConstraints: scs}}
}

// seeded sets the template UID that orders name ties.
func seeded(r Request, uid string) Request {
	r.TieSeed = uid
	return r
}

func fresh(r Request) Request {
	r.Mode = Fresh
	return r
}

// show renders targets as "a:3 b:2".
func show(ts []workv1alpha1.TargetCluster) string {
	parts := make([]string, len(ts))
	for i, t := range ts {
		parts[i] = fmt.Sprintf("%s:%d", t.Name, t.Replicas)
	}
	return strings.Join(parts, " ")
}
