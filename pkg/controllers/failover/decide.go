package failover

import (
	"fmt"
	"slices"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/controllers/internal/bindingutil"
	"github.com/shepherd-io/shepherd/pkg/placement"
)

// Eviction reasons, written in graceful eviction tasks, the eviction
// history and the metric's reason label.
const (
	ReasonApplicationFailure = "ApplicationFailure"
	ReasonTaintUntolerated   = "TaintUntolerated"
)

// Producer is written in the graceful eviction tasks this controller creates.
const Producer = "shepherd-failover"

// eviction is one cluster to evict a binding from.
type eviction struct {
	cluster string
	reason  string
	message string
	purge   policyv1alpha1.PurgeMode
	grace   *int32
	// state holds the rules of the failover's state preservation, if any.
	state *policyv1alpha1.StatePreservation
}

// deadlines collects the earliest future time something falls due.
type deadlines struct{ next time.Time }

func (d *deadlines) add(t time.Time) {
	if d.next.IsZero() || t.Before(d.next) {
		d.next = t
	}
}

// after is how long from now until the earliest deadline; 0 for none.
func (d *deadlines) after(now time.Time) time.Duration {
	if d.next.IsZero() {
		return 0
	}
	return max(d.next.Sub(now), time.Millisecond)
}

func secondsOr(p *int32, def int32) time.Duration {
	if p != nil {
		return time.Duration(*p) * time.Second
	}
	return time.Duration(def) * time.Second
}

// applicationEvictions returns the active targets whose copy has been
// Unhealthy for longer than the toleration while the preconditions hold
// (healthyState: the copy was once Healthy; delaySeconds: after the status
// was first collected), and records in d when a pending one falls due.
// Every time comes from the binding's status, so a restart changes nothing.
func applicationEvictions(spec *workv1alpha1.BindingSpec, status *workv1alpha1.BindingStatus, now time.Time, d *deadlines) []eviction {
	if spec.Failover == nil || spec.Failover.Application == nil {
		return nil
	}
	app := spec.Failover.Application
	items := map[string]*workv1alpha1.AggregatedStatusItem{}
	for i := range status.AggregatedStatus {
		items[status.AggregatedStatus[i].ClusterName] = &status.AggregatedStatus[i]
	}
	toleration := secondsOr(app.DecisionConditions.TolerationSeconds, policyv1alpha1.DefaultTolerationSeconds)
	purge := app.PurgeMode
	if purge == "" {
		purge = policyv1alpha1.PurgeGracefully
	}
	var out []eviction
	for _, t := range bindingutil.ActiveTargets(spec.Clusters) {
		item, ok := items[t.Name]
		if !ok || item.Health != policyv1alpha1.ResourceUnhealthy || item.UnhealthySince == nil {
			continue // Healthy and Unknown never fail over
		}
		due := item.UnhealthySince.Add(toleration)
		if pre := app.PreConditions; pre != nil {
			if pre.HealthyState == policyv1alpha1.ResourceHealthy && !item.Settled {
				continue // never Healthy here: fix it in the cluster, not by moving
			}
			if pre.DelaySeconds != nil {
				if item.FirstCollectedTime == nil {
					continue
				}
				if start := item.FirstCollectedTime.Add(secondsOr(pre.DelaySeconds, 0)); start.After(due) {
					due = start
				}
			}
		}
		if now.Before(due) {
			d.add(due)
			continue
		}
		out = append(out, eviction{
			cluster: t.Name, reason: ReasonApplicationFailure, purge: purge, grace: app.GracePeriodSeconds, state: app.StatePreservation,
			message: fmt.Sprintf("Unhealthy since %s, longer than the toleration of %s", item.UnhealthySince.UTC().Format(time.RFC3339), toleration),
		})
	}
	return out
}

// clusterEvictions returns the active targets on clusters with a NoExecute
// taint the placement does not tolerate, or tolerates for a time that has
// run out (counted from the taint's timeAdded; a taint without one counts
// as old). As in Kubernetes' taint manager, the shortest tolerationSeconds
// of the matching tolerations applies, and matching tolerations without
// tolerationSeconds tolerate the taint forever.
func clusterEvictions(spec *workv1alpha1.BindingSpec, clusters map[string]*clusterv1alpha1.Cluster, now time.Time, d *deadlines) []eviction {
	var tolerations []corev1.Toleration
	if spec.Placement != nil {
		tolerations = spec.Placement.ClusterTolerations
	}
	purge := policyv1alpha1.PurgeImmediately
	var grace *int32
	var state *policyv1alpha1.StatePreservation
	if f := spec.Failover; f != nil {
		if f.Cluster != nil && f.Cluster.PurgeMode != "" {
			purge = f.Cluster.PurgeMode
		}
		if f.Cluster != nil {
			state = f.Cluster.StatePreservation
		}
		if f.Application != nil {
			grace = f.Application.GracePeriodSeconds
		}
	}
	var out []eviction
	for _, t := range bindingutil.ActiveTargets(spec.Clusters) {
		c, ok := clusters[t.Name]
		if !ok {
			continue
		}
		for i := range c.Spec.Taints {
			taint := &c.Spec.Taints[i]
			if taint.Effect != corev1.TaintEffectNoExecute {
				continue
			}
			due, forever := tolerationDeadline(tolerations, taint)
			if forever {
				continue
			}
			if now.Before(due) {
				d.add(due)
				continue
			}
			out = append(out, eviction{
				cluster: t.Name, reason: ReasonTaintUntolerated, purge: purge, grace: grace, state: state,
				message: fmt.Sprintf("cluster has taint {%s} the placement does not tolerate", taint.ToString()),
			})
			break
		}
	}
	return out
}

// tolerationDeadline is when a NoExecute taint evicts the placement, or
// forever when a matching toleration has no tolerationSeconds and none has.
func tolerationDeadline(tolerations []corev1.Toleration, taint *corev1.Taint) (time.Time, bool) {
	var added time.Time
	if taint.TimeAdded != nil {
		added = taint.TimeAdded.Time
	}
	matched, limited := false, false
	var shortest time.Duration
	for i := range tolerations {
		tol := &tolerations[i]
		if !tol.ToleratesTaint(logr.Discard(), taint, false) {
			continue
		}
		matched = true
		if tol.TolerationSeconds == nil {
			continue
		}
		secs := time.Duration(max(*tol.TolerationSeconds, 0)) * time.Second
		if !limited || secs < shortest {
			shortest, limited = secs, true
		}
	}
	switch {
	case !matched:
		return added, false
	case !limited:
		return time.Time{}, true
	}
	return added.Add(shortest), false
}

// evict takes the evicted clusters out of the placement
// (bindingutil.Evict: the target Unscheduled, the eviction history, a
// graceful eviction task for every purge mode but a direct one).
//
// With state preservation and a direct purge, the history entry also records the labels read
// from the evicted copy's status and the targets before the eviction; a
// value that cannot be read is left out and reported in the returned
// errors (the eviction goes ahead: the workload is failing there).
func evict(spec *workv1alpha1.BindingSpec, status *workv1alpha1.BindingStatus, evs []eviction, now metav1.Time) []error {
	var before []string
	for _, t := range bindingutil.ActiveTargets(spec.Clusters) {
		before = append(before, t.Name)
	}
	var errs []error
	for _, ev := range evs {
		e := bindingutil.Eviction{
			Cluster: ev.cluster, Reason: ev.reason, Message: ev.message,
			Producer: Producer, Purge: ev.purge, GracePeriodSeconds: ev.grace,
		}
		// As in Karmada, state is carried only when the old copy goes at
		// once: with a graceful purge both copies would run on one state.
		if ev.state != nil && ev.purge.Direct() {
			labels, err := preservedLabels(ev.state, statusOn(status, ev.cluster))
			if err != nil {
				errs = append(errs, fmt.Errorf("state preservation on cluster %s: %w", ev.cluster, err))
			}
			if len(labels) > 0 {
				e.PreservedLabelState = labels
				e.ClustersBeforeFailover = slices.Clone(before)
			}
		}
		bindingutil.Evict(spec, e, now)
	}
	return errs
}

// statusOn is the raw status of the copy on cluster, nil when unknown.
func statusOn(status *workv1alpha1.BindingStatus, cluster string) []byte {
	for _, item := range status.AggregatedStatus {
		if item.ClusterName == cluster && item.Status != nil {
			return item.Status.Raw
		}
	}
	return nil
}

// finishedTask is a graceful eviction task that may go, and why.
type finishedTask struct {
	cluster string
	why     string
}

// finishTasks removes the graceful eviction tasks whose old copy may go:
// Immediately at once; Graciously once every active target is Healthy or
// the grace period ended; Never once confirmed; any task whose cluster is
// an active target again. It records when a grace period ends in d.
func finishTasks(spec *workv1alpha1.BindingSpec, status *workv1alpha1.BindingStatus, now time.Time, d *deadlines) []finishedTask {
	active := bindingutil.ActiveTargets(spec.Clusters)
	healthy := len(active) > 0
	for _, t := range active {
		if !healthyOn(status, t.Name) {
			healthy = false
		}
	}
	var done []finishedTask
	spec.GracefulEvictionTasks = slices.DeleteFunc(spec.GracefulEvictionTasks, func(task workv1alpha1.GracefulEvictionTask) bool {
		why := ""
		switch {
		case slices.ContainsFunc(active, func(t workv1alpha1.TargetCluster) bool { return t.Name == task.FromCluster }):
			why = "the cluster is a target again"
		case task.PurgeMode.Direct():
			why = "purge mode Immediately"
		case task.PurgeMode == policyv1alpha1.PurgeNever:
			if task.Confirmed {
				why = "confirmed by a user"
			}
		case healthy:
			why = "the workload is Healthy on its new clusters"
		default:
			end := task.CreationTimestamp.Add(secondsOr(task.GracePeriodSeconds, policyv1alpha1.DefaultGracePeriodSeconds))
			if !now.Before(end) {
				why = "the grace period ended"
			} else {
				d.add(end)
			}
		}
		if why != "" {
			done = append(done, finishedTask{cluster: task.FromCluster, why: why})
		}
		return why != ""
	})
	return done
}

func healthyOn(status *workv1alpha1.BindingStatus, cluster string) bool {
	for _, item := range status.AggregatedStatus {
		if item.ClusterName == cluster {
			return item.Health == policyv1alpha1.ResourceHealthy
		}
	}
	return false
}

// pruneHistory drops eviction history entries past the block window (none
// when the window is 0: blocked until cleared), recording in d when the
// next one expires. It returns the clusters dropped.
func pruneHistory(spec *workv1alpha1.BindingSpec, now time.Time, d *deadlines) []string {
	window := placement.BlockWindow(spec.Failover)
	if window == 0 {
		return nil
	}
	var dropped []string
	spec.EvictionHistory = slices.DeleteFunc(spec.EvictionHistory, func(h workv1alpha1.EvictionHistoryEntry) bool {
		end := h.EvictedAt.Add(window)
		if now.Before(end) {
			d.add(end)
			return false
		}
		dropped = append(dropped, h.ClusterName)
		return true
	})
	return dropped
}

// pendingCondition is the EvictionPending condition the remaining tasks
// call for; false when there is none.
func pendingCondition(tasks []workv1alpha1.GracefulEvictionTask, generation int64) (metav1.Condition, bool) {
	if len(tasks) == 0 {
		return metav1.Condition{}, false
	}
	var awaiting, grace []string
	for _, t := range tasks {
		if t.PurgeMode == policyv1alpha1.PurgeNever {
			awaiting = append(awaiting, t.FromCluster)
		} else {
			grace = append(grace, t.FromCluster)
		}
	}
	c := metav1.Condition{Type: ConditionEvictionPending, Status: metav1.ConditionTrue, ObservedGeneration: generation}
	if len(awaiting) > 0 {
		c.Reason = ReasonAwaitingConfirmation
		c.Message = fmt.Sprintf("The old copies on %v are kept until a user confirms their removal (set spec.gracefulEvictionTasks[].confirmed, or run `shepherd failover confirm`).", awaiting)
		if len(grace) > 0 {
			c.Message += fmt.Sprintf(" The copies on %v go once the workload is Healthy on its new clusters or their grace period ends.", grace)
		}
		return c, true
	}
	c.Reason = ReasonGracePeriod
	c.Message = fmt.Sprintf("The old copies on %v go once the workload is Healthy on its new clusters or their grace period ends.", grace)
	return c, true
}
