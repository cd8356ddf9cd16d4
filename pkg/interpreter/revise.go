package interpreter

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/apportion"
)

// ReviseReplicas returns, per target cluster, obj revised for that
// cluster's share of a Divided placement: the replica field (a Job's
// spec.parallelism) becomes the target's replicas, and a Job's
// spec.completions, when set, is split in proportion to the replicas (by
// the method the scheduler divides replicas with) so the fleet still runs
// the completions asked for, not one full set per cluster. Kinds without
// replicas come back unchanged (copies). obj is not modified.
func (l *Layered) ReviseReplicas(obj *unstructured.Unstructured, targets []workv1alpha1.TargetCluster) (map[string]*unstructured.Unstructured, error) {
	out := make(map[string]*unstructured.Unstructured, len(targets))
	k := l.lookup(obj.GroupVersionKind().GroupKind())
	if k == nil || k.replicas == nil {
		for _, t := range targets {
			out[t.Name] = obj.DeepCopy()
		}
		return out, nil
	}
	var completions []int64
	if k.job {
		c, found, err := nestedInt(obj, "spec", "completions")
		if err != nil {
			return nil, err
		}
		if found {
			weights := make([]int64, len(targets))
			for i, t := range targets {
				weights[i] = int64(t.Replicas)
			}
			completions = apportion.Webster(c, weights, apportion.TiesFor(string(obj.GetUID())))
		}
	}
	for i, t := range targets {
		m := obj.DeepCopy()
		if err := unstructured.SetNestedField(m.Object, int64(t.Replicas), k.replicas...); err != nil {
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
