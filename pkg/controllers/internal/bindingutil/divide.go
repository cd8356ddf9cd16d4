package bindingutil

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
)

// Divide returns, per target cluster, the template revised for that
// cluster's share of a Divided placement: spec.replicas (or a Job's
// spec.parallelism) becomes the target's replicas, and a Job's
// spec.completions, when set, is split in proportion to the replicas so
// the fleet still runs the completions asked for, not one full set per
// cluster. Kinds without replicas come back unchanged. obj is not modified.
func Divide(obj *unstructured.Unstructured, targets []workv1alpha1.TargetCluster) (map[string]*unstructured.Unstructured, error) {
	out := make(map[string]*unstructured.Unstructured, len(targets))
	wk, ok := workloadKinds[obj.GroupVersionKind().GroupKind()]
	if !ok || wk.replicas == nil {
		for _, t := range targets {
			out[t.Name] = obj.DeepCopy()
		}
		return out, nil
	}
	var completions []int64
	if wk.job {
		c, found, err := nestedInt(obj, "spec", "completions")
		if err != nil {
			return nil, err
		}
		if found {
			weights := make([]int64, len(targets))
			for i, t := range targets {
				weights[i] = int64(t.Replicas)
			}
			completions = Apportion(c, weights)
		}
	}
	for i, t := range targets {
		m := obj.DeepCopy()
		if err := unstructured.SetNestedField(m.Object, int64(t.Replicas), wk.replicas...); err != nil {
			return nil, err
		}
		if completions != nil {
			if err := unstructured.SetNestedField(m.Object, completions[i], "spec", "completions"); err != nil {
				return nil, err
			}
		}
		out[t.Name] = m
	}
	return out, nil
}

// Apportion splits total in proportion to weights by the largest remainder
// method: every share is the floor of its exact quota, and the units left
// go to the largest fractional parts, ties to the earlier index. Shares
// add up to total when some weight is positive; all are 0 otherwise.
func Apportion(total int64, weights []int64) []int64 {
	shares := make([]int64, len(weights))
	var sum int64
	for _, w := range weights {
		sum += max(w, 0)
	}
	if sum == 0 || total <= 0 {
		return shares
	}
	rem := make([]int64, len(weights))
	left := total
	for i, w := range weights {
		w = max(w, 0)
		shares[i] = total * w / sum
		rem[i] = total * w % sum
		left -= shares[i]
	}
	for ; left > 0; left-- {
		best := -1
		for i := range rem {
			if weights[i] > 0 && (best < 0 || rem[i] > rem[best]) {
				best = i
			}
		}
		shares[best]++
		rem[best] = -1
	}
	return shares
}
