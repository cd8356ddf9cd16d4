package bindingutil

import (
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
)

// MaxEvictionHistory is the API's bound on spec.evictionHistory.
const MaxEvictionHistory = 256

// Eviction takes one cluster out of a binding's placement: what failover
// writes when a workload fails there, and what the descheduler writes when
// a gang stays unschedulable there.
type Eviction struct {
	Cluster string
	// Reason and Message go into the history entry and the graceful
	// eviction task.
	Reason, Message string
	// Producer is the controller, written in the graceful eviction task.
	Producer string
	// Purge is how the old copy goes: Directly (or Immediately) at once,
	// otherwise through a graceful eviction task.
	Purge policyv1alpha1.PurgeMode
	// GracePeriodSeconds of a graceful purge; nil means
	// policyv1alpha1.DefaultGracePeriodSeconds.
	GracePeriodSeconds *int32
	// PreservedLabelState and ClustersBeforeFailover go into the history
	// entry as they are (failover's state preservation).
	PreservedLabelState    map[string]string
	ClustersBeforeFailover []string
}

// Evict moves the evicted cluster's target to Unscheduled (the scheduler
// then places the workload again: the active targets changed), records
// the eviction history the scheduler's ClusterEviction filter reads to
// keep the cluster out (the oldest entries go past MaxEvictionHistory),
// and adds a graceful eviction task for every purge mode but a direct
// one: a direct task would be dropped in this very write, so it is never
// written and the old copy goes at once. An earlier entry or task of the
// same cluster is replaced.
func Evict(spec *workv1alpha1.BindingSpec, ev Eviction, now metav1.Time) {
	var replicas int32
	for i := range spec.Clusters {
		if spec.Clusters[i].Name == ev.Cluster {
			spec.Clusters[i].State = workv1alpha1.TargetUnscheduled
			replicas = spec.Clusters[i].Replicas
		}
	}
	spec.EvictionHistory = slices.DeleteFunc(spec.EvictionHistory, func(h workv1alpha1.EvictionHistoryEntry) bool { return h.ClusterName == ev.Cluster })
	spec.EvictionHistory = append(spec.EvictionHistory, workv1alpha1.EvictionHistoryEntry{
		ClusterName: ev.Cluster, EvictedAt: now, Reason: ev.Reason, Message: ev.Message,
		PreservedLabelState: ev.PreservedLabelState, ClustersBeforeFailover: ev.ClustersBeforeFailover,
	})
	if n := len(spec.EvictionHistory) - MaxEvictionHistory; n > 0 {
		spec.EvictionHistory = spec.EvictionHistory[n:]
	}
	spec.GracefulEvictionTasks = slices.DeleteFunc(spec.GracefulEvictionTasks, func(t workv1alpha1.GracefulEvictionTask) bool { return t.FromCluster == ev.Cluster })
	if ev.Purge.Direct() {
		return
	}
	task := workv1alpha1.GracefulEvictionTask{
		FromCluster: ev.Cluster, Replicas: &replicas, Reason: ev.Reason, Message: ev.Message,
		Producer: ev.Producer, PurgeMode: ev.Purge, CreationTimestamp: now,
	}
	if ev.Purge.Graceful() {
		g := policyv1alpha1.DefaultGracePeriodSeconds
		if ev.GracePeriodSeconds != nil {
			g = *ev.GracePeriodSeconds
		}
		task.GracePeriodSeconds = &g
	}
	spec.GracefulEvictionTasks = append(spec.GracefulEvictionTasks, task)
}
