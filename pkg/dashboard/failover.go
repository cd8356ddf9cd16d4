package dashboard

import (
	"maps"
	"slices"
	"sort"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"

	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	taskv1alpha1 "github.com/shepherd-io/shepherd/api/task/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/placement"
)

// FailoverView is the failover and rescheduling page.
type FailoverView struct {
	Evictions []EvictionView
	Blocked   []BlockedView
	Tasks     []TaskView
	// Policies are the policies a Reschedule may name (namespace/name, or
	// the name of a ClusterPropagationPolicy), sorted.
	Policies []string
}

// EvictionView is a copy on an evicted cluster that is kept until it may go.
type EvictionView struct {
	Binding   Ref
	Workload  string
	Cluster   string
	Reason    string
	Message   string
	PurgeMode policyv1alpha1.PurgeMode
	Since     time.Time
	// GraceEnds is when a Graciously purged copy goes at the latest.
	GraceEnds *time.Time
	// AwaitingConfirmation is true for a purge mode Never copy that no one
	// confirmed yet: the Confirm action lets it go.
	AwaitingConfirmation bool
	Confirmed            bool
}

// BlockedView is an evicted cluster the scheduler keeps a workload off.
type BlockedView struct {
	Binding   Ref
	Workload  string
	Cluster   string
	Reason    string
	EvictedAt time.Time
	// Until is when the block ends; nil blocks until the eviction history
	// is cleared (blockPredecessorSeconds 0).
	Until *time.Time
}

// TaskView is a RescheduleTask and its targets.
type TaskView struct {
	Name      string
	Created   time.Time
	Completed bool
	Targets   []taskv1alpha1.TargetStatus
	Pending   int
}

// BuildFailover gathers evictions, blocks and tasks, each sorted: evictions
// and blocks newest first (then by workload and cluster), tasks newest
// first (then by name).
func BuildFailover(s *Snapshot) FailoverView {
	var v FailoverView
	policies := map[string]bool{}
	for _, b := range s.Bindings {
		v.Evictions = append(v.Evictions, evictionsOf(b)...)
		v.Blocked = append(v.Blocked, blockedOf(s.Now, b)...)
		if p := policyName(b.Obj.GetBindingSpec()); p != "" {
			policies[p] = true
		}
	}
	v.Policies = slices.Sorted(maps.Keys(policies))
	sort.Slice(v.Evictions, func(i, j int) bool {
		a, b := v.Evictions[i], v.Evictions[j]
		return newerFirst(a.Since, b.Since, a.Workload+"\x00"+a.Cluster, b.Workload+"\x00"+b.Cluster)
	})
	sort.Slice(v.Blocked, func(i, j int) bool {
		a, b := v.Blocked[i], v.Blocked[j]
		return newerFirst(a.EvictedAt, b.EvictedAt, a.Workload+"\x00"+a.Cluster, b.Workload+"\x00"+b.Cluster)
	})
	for _, t := range s.Tasks {
		tv := TaskView{Name: t.Name, Created: t.CreationTimestamp.Time, Targets: t.Status.Targets,
			Completed: meta.IsStatusConditionTrue(t.Status.Conditions, taskv1alpha1.ConditionCompleted)}
		for _, target := range t.Status.Targets {
			if target.Phase == taskv1alpha1.TargetPending {
				tv.Pending++
			}
		}
		v.Tasks = append(v.Tasks, tv)
	}
	sort.Slice(v.Tasks, func(i, j int) bool {
		return newerFirst(v.Tasks[i].Created, v.Tasks[j].Created, v.Tasks[i].Name, v.Tasks[j].Name)
	})
	return v
}

func newerFirst(a, b time.Time, ka, kb string) bool {
	if !a.Equal(b) {
		return a.After(b)
	}
	return ka < kb
}

// evictionsOf lists a binding's graceful eviction tasks.
func evictionsOf(b Binding) []EvictionView {
	spec := b.Obj.GetBindingSpec()
	var out []EvictionView
	for _, t := range spec.GracefulEvictionTasks {
		e := EvictionView{
			Binding: b.Ref(), Workload: workloadName(b), Cluster: t.FromCluster, Reason: t.Reason, Message: t.Message,
			PurgeMode: t.PurgeMode, Since: t.CreationTimestamp.Time, Confirmed: t.Confirmed,
			AwaitingConfirmation: t.PurgeMode == policyv1alpha1.PurgeNever && !t.Confirmed,
		}
		if t.PurgeMode.Graceful() && t.GracePeriodSeconds != nil {
			end := t.CreationTimestamp.Add(time.Duration(*t.GracePeriodSeconds) * time.Second)
			e.GraceEnds = &end
		}
		out = append(out, e)
	}
	return out
}

// blockedOf lists the evicted clusters the binding's policy still blocks at
// now, by the same window the scheduler's ClusterEviction filter applies.
func blockedOf(now time.Time, b Binding) []BlockedView {
	spec := b.Obj.GetBindingSpec()
	window := placement.BlockWindow(spec.Failover)
	var out []BlockedView
	for _, h := range spec.EvictionHistory {
		bv := BlockedView{Binding: b.Ref(), Workload: workloadName(b), Cluster: h.ClusterName, Reason: h.Reason, EvictedAt: h.EvictedAt.Time}
		if window > 0 {
			until := h.EvictedAt.Add(window)
			if !until.After(now) {
				continue
			}
			bv.Until = &until
		}
		out = append(out, bv)
	}
	return out
}

// workloadName is "Kind namespace/name" of the binding's template.
func workloadName(b Binding) string {
	r := b.Obj.GetBindingSpec().Resource
	if r.Namespace == "" {
		return r.Kind + " " + r.Name
	}
	return r.Kind + " " + r.Namespace + "/" + r.Name
}
