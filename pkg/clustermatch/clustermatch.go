// Package clustermatch says whether one Cluster matches a ClusterAffinity.
//
// The scheduler selects clusters for a whole fleet at once from indexes
// (pkg/scheduler/framework/selector.go); other code, such as the override
// engine deciding whether a rule's targetCluster matches the cluster it
// renders for, asks about one cluster at a time. Both must agree exactly,
// or an override would apply to a cluster a placement with the same
// affinity excludes; this package is the one-cluster form of the
// scheduler's rules, and its tests pin the same cases.
package clustermatch

import (
	"fmt"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
)

// Matches says whether c matches every set part of aff and is not excluded
// by it; a nil or empty affinity matches every cluster.
//
//   - labelSelector: metav1.LabelSelector semantics on the cluster's labels
//     (NotIn and DoesNotExist match a cluster without the key).
//   - fieldSelector: keys provider, region and zone, read from the
//     cluster's spec; an empty field does not exist (Exists means not
//     empty, NotIn matches an empty field).
//   - clusterNames: when not empty, the cluster must be one of them.
//   - exclude: the cluster must not be one of them.
//
// The error reports an unknown operator or field key, whatever the
// cluster: the affinity matches no cluster then, as in the scheduler.
func Matches(aff *policyv1alpha1.ClusterAffinity, c *clusterv1alpha1.Cluster) (bool, error) {
	if aff == nil {
		return true, nil
	}
	ok, err := matchLabels(aff.LabelSelector, c.Labels)
	if err != nil {
		return false, err
	}
	fieldsOK, err := matchFields(aff.FieldSelector, c)
	if err != nil {
		return false, err
	}
	if !ok || !fieldsOK {
		return false, nil
	}
	if len(aff.ClusterNames) > 0 && !slices.Contains(aff.ClusterNames, c.Name) {
		return false, nil
	}
	return !slices.Contains(aff.Exclude, c.Name), nil
}

// matchLabels checks every requirement, also after one failed, so that an
// unknown operator is reported whatever the cluster's labels.
func matchLabels(sel *metav1.LabelSelector, labels map[string]string) (bool, error) {
	if sel == nil {
		return true, nil
	}
	ok := true
	for k, v := range sel.MatchLabels {
		if got, has := labels[k]; !has || got != v {
			ok = false
		}
	}
	for _, r := range sel.MatchExpressions {
		v, has := labels[r.Key]
		m, err := requirement(string(r.Operator), v, has, r.Values)
		if err != nil {
			return false, fmt.Errorf("labelSelector key %q: %w", r.Key, err)
		}
		ok = ok && m
	}
	return ok, nil
}

func matchFields(fs *policyv1alpha1.FieldSelector, c *clusterv1alpha1.Cluster) (bool, error) {
	if fs == nil {
		return true, nil
	}
	ok := true
	for _, r := range fs.MatchExpressions {
		var v string
		switch r.Key {
		case policyv1alpha1.ProviderField:
			v = c.Spec.Provider
		case policyv1alpha1.RegionField:
			v = c.Spec.Region
		case policyv1alpha1.ZoneField:
			v = c.Spec.Zone
		default:
			return false, fmt.Errorf("fieldSelector key %q: must be provider, region or zone", r.Key)
		}
		m, err := requirement(string(r.Operator), v, v != "", r.Values)
		if err != nil {
			return false, fmt.Errorf("fieldSelector key %q: %w", r.Key, err)
		}
		ok = ok && m
	}
	return ok, nil
}

// requirement applies one operator to a key that has value v when has.
func requirement(op, v string, has bool, values []string) (bool, error) {
	switch op {
	case "In":
		return has && slices.Contains(values, v), nil
	case "NotIn":
		return !has || !slices.Contains(values, v), nil
	case "Exists":
		return has, nil
	case "DoesNotExist":
		return !has, nil
	}
	return false, fmt.Errorf("operator %q is not supported: use In, NotIn, Exists or DoesNotExist", op)
}
