package workstatus

import (
	"reflect"
	"slices"
	"sort"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/names"
)

// clusterOfWork is the Work's cluster: its label, else its namespace's.
func clusterOfWork(w *workv1alpha1.Work) string {
	if c := w.Labels[workv1alpha1.LabelCluster]; c != "" {
		return c
	}
	c, _ := names.ClusterOfExecutionNamespace(w.Namespace)
	return c
}

// templateManifest finds the status of the manifest that is the binding's
// template (a Work may also carry dependencies): same group, kind and name,
// preferring the same namespace; the first manifest when none matches.
func templateManifest(ref workv1alpha1.ObjectReference, statuses []workv1alpha1.ManifestStatus) *workv1alpha1.ManifestStatus {
	gv, _ := schema.ParseGroupVersion(ref.APIVersion)
	var match *workv1alpha1.ManifestStatus
	for i := range statuses {
		id := statuses[i].Identifier
		if id.Group != gv.Group || id.Kind != ref.Kind || id.Name != ref.Name {
			continue
		}
		if id.Namespace == ref.Namespace {
			return &statuses[i]
		}
		if match == nil {
			match = &statuses[i]
		}
	}
	if match == nil && len(statuses) > 0 {
		match = &statuses[0]
	}
	return match
}

// aggregate computes a binding's aggregatedStatus from its Works, one item
// per cluster sorted by cluster name, carrying over from prev what must
// survive: when status was first collected, whether the copy ever was
// Healthy (settled), and since when it is Unhealthy. Works being deleted
// (their cluster left the placement) have no item.
func aggregate(prev []workv1alpha1.AggregatedStatusItem, works []workv1alpha1.Work, ref workv1alpha1.ObjectReference, now metav1.Time) []workv1alpha1.AggregatedStatusItem {
	before := map[string]workv1alpha1.AggregatedStatusItem{}
	for _, p := range prev {
		before[p.ClusterName] = p
	}
	byCluster := map[string]workv1alpha1.AggregatedStatusItem{}
	for i := range works {
		w := &works[i]
		cluster := clusterOfWork(w)
		if cluster == "" || !w.DeletionTimestamp.IsZero() {
			continue
		}
		item := workv1alpha1.AggregatedStatusItem{ClusterName: cluster, Health: policyv1alpha1.ResourceUnknown}
		if c := meta.FindStatusCondition(w.Status.Conditions, workv1alpha1.WorkConditionApplied); c != nil {
			item.Applied = c.Status == metav1.ConditionTrue
			if !item.Applied {
				item.AppliedMessage, item.AppliedReason = c.Message, c.Reason
			}
		}
		if c := meta.FindStatusCondition(w.Status.Conditions, workv1alpha1.WorkConditionDrifted); c != nil && c.Status == metav1.ConditionTrue {
			item.Drifted, item.DriftMessage = true, c.Message
		}
		if ms := templateManifest(ref, w.Status.ManifestStatuses); ms != nil {
			item.Status = ms.Status
			item.UnschedulableReplicas, item.UnschedulableSince = ms.UnschedulableReplicas, ms.UnschedulableSince
			item.UnschedulableComponents = ms.UnschedulableComponents
			if ms.Health != "" {
				item.Health, item.HealthReason = ms.Health, ms.HealthReason
			}
		}
		p, seen := before[cluster]
		switch {
		case seen && p.FirstCollectedTime != nil:
			item.FirstCollectedTime = p.FirstCollectedTime
		case item.Status != nil:
			item.FirstCollectedTime = &now
		}
		item.StatusTime = statusTime(item, p, seen, templateManifest(ref, w.Status.ManifestStatuses), now)
		item.Settled = (seen && p.Settled) || item.Health == policyv1alpha1.ResourceHealthy
		if item.Health == policyv1alpha1.ResourceUnhealthy {
			if seen && p.Health == policyv1alpha1.ResourceUnhealthy && p.UnhealthySince != nil {
				item.UnhealthySince = p.UnhealthySince
			} else {
				item.UnhealthySince = &now
			}
		}
		byCluster[cluster] = item
	}
	out := make([]workv1alpha1.AggregatedStatusItem, 0, len(byCluster))
	for _, item := range byCluster {
		out = append(out, item)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ClusterName < out[j].ClusterName })
	return out
}

// sameItems compares aggregated statuses, raw statuses by JSON meaning.
func sameItems(a, b []workv1alpha1.AggregatedStatusItem) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if !workv1alpha1.RawEqual(x.Status, y.Status) {
			return false
		}
		x.Status, y.Status = nil, nil
		if !timeEqual(x.FirstCollectedTime, y.FirstCollectedTime) || !timeEqual(x.UnhealthySince, y.UnhealthySince) || !timeEqual(x.StatusTime, y.StatusTime) ||
			!timeEqual(x.UnschedulableSince, y.UnschedulableSince) || !sameComponents(x.UnschedulableComponents, y.UnschedulableComponents) {
			return false
		}
		x.FirstCollectedTime, y.FirstCollectedTime, x.UnhealthySince, y.UnhealthySince, x.StatusTime, y.StatusTime = nil, nil, nil, nil, nil, nil
		x.UnschedulableSince, y.UnschedulableSince, x.UnschedulableComponents, y.UnschedulableComponents = nil, nil, nil, nil
		// What is left compares by value; DeepEqual because the struct
		// holds a list, which != cannot compare even when nil.
		if !reflect.DeepEqual(x, y) {
			return false
		}
	}
	return true
}

// sameManifestStatuses compares manifest statuses, raw statuses by JSON
// meaning: the API server may re-encode what was written, and a byte-wise
// comparison would then rewrite the Work on every event.
func sameManifestStatuses(a, b []workv1alpha1.ManifestStatus) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Identifier != b[i].Identifier || a[i].Health != b[i].Health || a[i].HealthReason != b[i].HealthReason || a[i].Generation != b[i].Generation ||
			a[i].ResourceVersion != b[i].ResourceVersion || !workv1alpha1.RawEqual(a[i].Status, b[i].Status) ||
			a[i].UnschedulableReplicas != b[i].UnschedulableReplicas || !timeEqual(a[i].UnschedulableSince, b[i].UnschedulableSince) ||
			!sameComponents(a[i].UnschedulableComponents, b[i].UnschedulableComponents) || !timeEqual(a[i].StatusTime, b[i].StatusTime) {
			return false
		}
	}
	return true
}

// sameComponents compares unschedulable components, their times as
// timeEqual does.
func sameComponents(a, b []workv1alpha1.UnschedulableComponent) bool {
	return slices.EqualFunc(a, b, func(x, y workv1alpha1.UnschedulableComponent) bool {
		return x.Name == y.Name && x.Replicas == y.Replicas && timeEqual(&x.Since, &y.Since)
	})
}

// timeEqual compares at the API's one-second precision.
func timeEqual(a, b *metav1.Time) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Unix() == b.Unix()
}

// statusTime is when the copy's status last changed, on the clock that
// stamps the cluster's lastProbeTime: the reporter's (the Work's
// statusTime, written by the agent of a Pull cluster), else the hub's,
// kept while the status stays the same.
func statusTime(item workv1alpha1.AggregatedStatusItem, prev workv1alpha1.AggregatedStatusItem, seen bool, ms *workv1alpha1.ManifestStatus, now metav1.Time) *metav1.Time {
	switch {
	case item.Status == nil:
		return nil
	case ms != nil && ms.StatusTime != nil:
		return ms.StatusTime
	case seen && prev.StatusTime != nil && workv1alpha1.RawEqual(prev.Status, item.Status):
		return prev.StatusTime
	}
	return &now
}
