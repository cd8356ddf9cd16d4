package bindingutil

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/scheduler/core"
)

// Divide returns, per target cluster, the template revised for that
// cluster's share of a Divided placement: spec.replicas (or a Job's
// spec.parallelism) becomes the target's replicas, and a Job's
// spec.completions, when set, is split in proportion to the replicas so
// the fleet still runs the completions asked for, not one full set per
// cluster, by the method the scheduler divides replicas with. Kinds without replicas come back unchanged. obj is not modified.
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
			completions = core.Webster(c, weights, core.TiesFor(string(obj.GetUID())))
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
