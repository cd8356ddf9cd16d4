package framework

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
)

// Selector operators shared by label and field selectors.
const (
	opIn           = "In"
	opNotIn        = "NotIn"
	opExists       = "Exists"
	opDoesNotExist = "DoesNotExist"
)

// SelectNames returns the set of the named clusters; unknown names are
// ignored (the cluster may have left the fleet).
func (s *CycleState) SelectNames(names []string) ClusterSet {
	set := s.NewClusterSet()
	for _, n := range names {
		if i, ok := s.snap.byName[n]; ok {
			set.Add(int(i))
		}
	}
	return set
}

// SelectLabels returns the clusters whose labels match sel, with
// metav1.LabelSelector semantics (an empty selector matches everything, and
// NotIn and DoesNotExist match clusters without the key). A nil selector
// matches everything.
func (s *CycleState) SelectLabels(sel *metav1.LabelSelector) (ClusterSet, error) {
	set := s.AllClusters()
	if sel == nil {
		return set, nil
	}
	for k, v := range sel.MatchLabels {
		s.keepValue(set, s.snap.labels[k], v)
	}
	for _, r := range sel.MatchExpressions {
		if err := s.apply(set, s.snap.labels[r.Key], string(r.Operator), r.Values); err != nil {
			return nil, fmt.Errorf("labelSelector key %q: %w", r.Key, err)
		}
	}
	return set, nil
}

// SelectFields returns the clusters whose provider, region and zone match
// fs. Exists means the field is not empty.
func (s *CycleState) SelectFields(fs *policyv1alpha1.FieldSelector) (ClusterSet, error) {
	set := s.AllClusters()
	if fs == nil {
		return set, nil
	}
	for _, r := range fs.MatchExpressions {
		switch r.Key {
		case policyv1alpha1.ProviderField, policyv1alpha1.RegionField, policyv1alpha1.ZoneField:
		default:
			return nil, fmt.Errorf("fieldSelector key %q: must be provider, region or zone", r.Key)
		}
		if err := s.apply(set, s.snap.fields[r.Key], string(r.Operator), r.Values); err != nil {
			return nil, fmt.Errorf("fieldSelector key %q: %w", r.Key, err)
		}
	}
	return set, nil
}

// SelectAffinity returns the clusters matching every set part of aff and
// not excluded by it; nil matches every cluster.
func (s *CycleState) SelectAffinity(aff *policyv1alpha1.ClusterAffinity) (ClusterSet, error) {
	if aff == nil {
		return s.AllClusters(), nil
	}
	set, err := s.SelectLabels(aff.LabelSelector)
	if err != nil {
		return nil, err
	}
	fields, err := s.SelectFields(aff.FieldSelector)
	if err != nil {
		return nil, err
	}
	set.And(fields)
	if len(aff.ClusterNames) > 0 {
		set.And(s.SelectNames(aff.ClusterNames))
	}
	for _, n := range aff.Exclude {
		if i, ok := s.snap.byName[n]; ok {
			set.Remove(int(i))
		}
	}
	return set, nil
}

// WithLabel returns the clusters that have the label key.
func (s *CycleState) WithLabel(key string) ClusterSet {
	set := s.NewClusterSet()
	if p := s.snap.labels[key]; p != nil {
		set.AddAll(p.all)
	}
	return set
}

// WithField returns the clusters whose provider, region or zone (field) is
// not empty.
func (s *CycleState) WithField(field string) ClusterSet {
	set := s.NewClusterSet()
	if p := s.snap.fields[field]; p != nil {
		set.AddAll(p.all)
	}
	return set
}

// keepValue keeps the members of set whose key has value v.
func (s *CycleState) keepValue(set ClusterSet, p *postings, v string) {
	match := s.NewClusterSet()
	if p != nil {
		match.AddAll(p.values[v])
	}
	set.And(match)
}

// apply narrows set by one requirement on a key indexed by p (nil when no
// cluster has the key).
func (s *CycleState) apply(set ClusterSet, p *postings, op string, values []string) error {
	switch op {
	case opIn:
		match := s.NewClusterSet()
		if p != nil {
			for _, v := range values {
				match.AddAll(p.values[v])
			}
		}
		set.And(match)
	case opNotIn:
		if p != nil {
			for _, v := range values {
				set.RemoveAll(p.values[v])
			}
		}
	case opExists:
		match := s.NewClusterSet()
		if p != nil {
			match.AddAll(p.all)
		}
		set.And(match)
	case opDoesNotExist:
		if p != nil {
			set.RemoveAll(p.all)
		}
	default:
		return fmt.Errorf("operator %q is not supported: use In, NotIn, Exists or DoesNotExist", op)
	}
	return nil
}
