package descheduler

import (
	"fmt"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/controllers/internal/bindingutil"
)

// The ReplicasDescheduled condition of a binding and its reasons.
const (
	ConditionReplicasDescheduled = "ReplicasDescheduled"
	// ReasonMoved (True): replicas were taken back from clusters.
	ReasonMoved = "Moved"
	// ReasonNotMovable (False): replicas are unschedulable, but the
	// placement says where they go.
	ReasonNotMovable = "NotMovable"
	// ReasonHeld (False): replicas are due to move, but a failover or a
	// reschedule moves the workload, or the binding moved recently.
	ReasonHeld = "Held"
)

// move takes count replicas back from a cluster, which keeps keep; a
// whole move takes a gang off the cluster (count is its unschedulable
// replicas there).
type move struct {
	cluster     string
	count, keep int32
	since       time.Time
	whole       bool
	// components lower the shares of a divided gang's divisible
	// components on the cluster (dividedMove); count is their sum.
	components []componentMove
	// pending names the components those replicas belong to, for the
	// messages (pendingComponents); "" when the cluster reports none.
	pending string
}

// report is a cluster's unschedulable replicas that are not moved, and
// the components they belong to (as move's).
type report struct {
	cluster string
	count   int32
	pending string
}

// decision is what to do with one binding.
type decision struct {
	// moves are the clusters to take replicas back from now.
	moves []move
	// reports are unschedulable replicas that stay (placement not movable,
	// or held); why says why.
	reports []report
	why     string
	reason  string
	// next is when to look again (zero: nothing falls due).
	next time.Time
	// recorded is the last move (workv1alpha1.AnnotationDescheduled) while the binding
	// waits out its threshold after it.
	recorded string
	// gang: the binding is a gang, moved only whole (gang.go).
	gang bool
	// threshold is the threshold in force when something moves.
	threshold time.Duration
}

// movable says whether the placement lets the scheduler choose where
// replicas go by room: Divided by dynamic weights, or Aggregated. The
// reason names what is not movable otherwise.
func movable(p *policyv1alpha1.Placement) (bool, string) {
	if p == nil || p.ReplicaScheduling == nil || p.ReplicaScheduling.ReplicaSchedulingType == policyv1alpha1.ReplicaSchedulingTypeDuplicated {
		return false, "Duplicated: every cluster runs all replicas"
	}
	rs := p.ReplicaScheduling
	if rs.ReplicaSchedulingType != "" && rs.ReplicaSchedulingType != policyv1alpha1.ReplicaSchedulingTypeDivided {
		return false, fmt.Sprintf("replicaSchedulingType %s", rs.ReplicaSchedulingType)
	}
	if rs.ReplicaDivisionPreference == policyv1alpha1.ReplicaDivisionPreferenceAggregated {
		return true, ""
	}
	if rs.WeightPreference != nil && rs.WeightPreference.DynamicWeight != "" {
		return true, ""
	}
	if rs.WeightPreference != nil && len(rs.WeightPreference.StaticWeightList) > 0 {
		return false, "static weights say where replicas go"
	}
	return false, "equal weights say where replicas go"
}

// threshold is the policy's unschedulableThresholdSeconds, else def.
func threshold(p *policyv1alpha1.Placement, def time.Duration) time.Duration {
	if p != nil && p.ReplicaScheduling != nil && p.ReplicaScheduling.UnschedulableThresholdSeconds != nil && *p.ReplicaScheduling.UnschedulableThresholdSeconds > 0 {
		return time.Duration(*p.ReplicaScheduling.UnschedulableThresholdSeconds) * time.Second
	}
	return def
}

// reschedulePending says whether spec.rescheduleTriggeredAt was not served
// yet, as placement.RescheduleServed judges it.
func reschedulePending(spec *workv1alpha1.BindingSpec, status *workv1alpha1.BindingStatus, annotations map[string]string) bool {
	at := spec.RescheduleTriggeredAt
	if at == nil {
		return false
	}
	last := status.LastScheduledTime
	if last == nil {
		return true
	}
	want, got := at.Truncate(time.Second), last.Truncate(time.Second)
	if !got.Equal(want) {
		return !got.After(want)
	}
	observed, err := time.Parse(time.RFC3339, annotations[workv1alpha1.AnnotationRescheduleObserved])
	return err != nil || observed.Before(want)
}

// decide looks at a binding's unschedulable replicas. def is the
// controller's threshold. Every time comes from the binding, so a restart
// changes nothing.
func decide(spec *workv1alpha1.BindingSpec, status *workv1alpha1.BindingStatus, annotations map[string]string, def time.Duration, now time.Time) decision {
	d := decision{gang: isGang(spec)}
	items := map[string]*workv1alpha1.AggregatedStatusItem{}
	for i := range status.AggregatedStatus {
		items[status.AggregatedStatus[i].ClusterName] = &status.AggregatedStatus[i]
	}
	type stuck struct {
		target workv1alpha1.TargetCluster
		item   *workv1alpha1.AggregatedStatusItem
	}
	var all []stuck
	for _, t := range bindingutil.ActiveTargets(spec.Clusters) {
		if it, ok := items[t.Name]; ok && it.UnschedulableReplicas > 0 && it.UnschedulableSince != nil {
			all = append(all, stuck{t, it})
		}
	}
	if len(all) == 0 {
		return d
	}
	if d.gang {
		slices.SortFunc(all, func(a, b stuck) int { return strings.Compare(a.target.Name, b.target.Name) })
	}
	reportAll := func(reason, why string) decision {
		for _, s := range all {
			d.reports = append(d.reports, report{cluster: s.target.Name, count: s.item.UnschedulableReplicas,
				pending: pendingComponents(spec.Components, s.item.UnschedulableComponents)})
		}
		d.reason, d.why = reason, why
		return d
	}
	if ok, why := movable(spec.Placement); !ok && !d.gang {
		return reportAll(ReasonNotMovable, "not moved: "+why)
	}
	if len(spec.GracefulEvictionTasks) > 0 {
		return reportAll(ReasonHeld, "not moved while a failover moves the workload")
	}
	if reschedulePending(spec, status, annotations) {
		return reportAll(ReasonHeld, "not moved while a reschedule is pending")
	}
	thr := threshold(spec.Placement, def)
	if last, err := time.Parse(time.RFC3339, annotations[workv1alpha1.AnnotationDescheduledAt]); err == nil {
		if next := last.Add(thr); now.Before(next) {
			// One move per threshold: the members' counts may still be
			// those from before the last move.
			d.next = next
			d.recorded = annotations[workv1alpha1.AnnotationDescheduled]
			return d
		}
	}
	for _, s := range all {
		due := s.item.UnschedulableSince.Add(thr)
		if now.Before(due) {
			if d.next.IsZero() || due.Before(d.next) {
				d.next = due
			}
			continue
		}
		if d.gang {
			if m, ok := dividedMove(spec, s.target, s.item); ok {
				// Divisible components' replicas of a divided gang:
				// divided replicas, lowered there (gang.go).
				if m.count > 0 {
					d.moves = append(d.moves, m)
				}
				continue
			}
			// Never part of a gang: it leaves the cluster whole, whatever
			// its targets record of its components.
			d.moves = append(d.moves, move{cluster: s.target.Name, count: s.item.UnschedulableReplicas, since: s.item.UnschedulableSince.Time, whole: true,
				pending: pendingComponents(spec.Components, s.item.UnschedulableComponents)})
			continue
		}
		keep := max(s.target.Replicas-s.item.UnschedulableReplicas, 0)
		if n := s.target.Replicas - keep; n > 0 {
			d.moves = append(d.moves, move{cluster: s.target.Name, count: n, keep: keep, since: s.item.UnschedulableSince.Time})
		}
	}
	if len(d.moves) > 0 {
		d.next = time.Time{} // the move's annotation brings the binding back
		d.reason = ReasonMoved
		d.why = fmt.Sprintf("unschedulable for longer than %s", thr)
		d.threshold = thr
		if slices.ContainsFunc(d.moves, func(m move) bool { return m.whole }) {
			d.reason, d.why = ReasonGangMoved, gangWhy(spec, thr)
		}
	}
	return d
}

// apply lowers the moved targets' replicas, or evicts a gang's (gang.go),
// and stamps the move's time.
func apply(spec *workv1alpha1.BindingSpec, annotations map[string]string, d decision, now time.Time) map[string]string {
	moves := d.moves
	keep := map[string]int32{}
	for _, m := range moves {
		switch {
		case m.whole:
			bindingutil.Evict(spec, eviction(spec, m, d.threshold), metav1.NewTime(now))
		case len(m.components) > 0:
			lowerComponents(spec, m)
		default:
			keep[m.cluster] = m.keep
		}
	}
	for i := range spec.Clusters {
		t := &spec.Clusters[i]
		if k, ok := keep[t.Name]; ok && bindingutil.IsActive(*t) {
			t.Replicas = k
		}
	}
	out := make(map[string]string, len(annotations)+1)
	for k, v := range annotations {
		out[k] = v
	}
	out[workv1alpha1.AnnotationDescheduledAt] = now.UTC().Format(time.RFC3339)
	out[workv1alpha1.AnnotationDescheduled] = describe(d)
	return out
}

// condition is the ReplicasDescheduled condition for d; false when the
// binding has nothing to say (the condition is then left as it is: the
// last move stays recorded).
func condition(d decision, generation int64) (metav1.Condition, bool) {
	var parts []string
	moved := func(what string) (metav1.Condition, bool) {
		reason, prefix := ReasonMoved, "Moved unschedulable replicas: "
		// A gang moved whole; a divided gang's divisible components only
		// lowered are replicas moved (a recorded move says which it was).
		if d.reason == ReasonGangMoved || (d.reason == "" && d.gang && strings.HasPrefix(what, wholePrefix)) {
			reason, prefix = ReasonGangMoved, "Moved "
		}
		return metav1.Condition{Type: ConditionReplicasDescheduled, Status: metav1.ConditionTrue, Reason: reason, ObservedGeneration: generation,
			Message: prefix + what}, true
	}
	switch {
	case len(d.moves) > 0:
		return moved(describe(d))
	case d.recorded != "":
		return moved(d.recorded)
	case len(d.reports) > 0:
		for _, r := range d.reports {
			part := fmt.Sprintf("%d in %s", r.count, r.cluster)
			if r.pending != "" {
				part += " (" + r.pending + ")"
			}
			parts = append(parts, part)
		}
		return metav1.Condition{Type: ConditionReplicasDescheduled, Status: metav1.ConditionFalse, Reason: d.reason, ObservedGeneration: generation,
			Message: fmt.Sprintf("Replicas Pending unschedulable: %s; %s", strings.Join(parts, ", "), d.why)}, true
	}
	return metav1.Condition{}, false
}

// describe says what d moves: "2 from member2 (keeps 2); unschedulable
// for longer than 5m0s", or for a gang "the gang whole from member2 (3 of
// its replicas unschedulable there); unschedulable for longer than ...".
func describe(d decision) string {
	var whole []move
	parts := make([]string, 0, len(d.moves))
	for _, m := range d.moves {
		switch {
		case m.whole:
			whole = append(whole, m)
		case len(m.components) > 0:
			parts = append(parts, describeComponents(m))
		default:
			parts = append(parts, fmt.Sprintf("%d from %s (keeps %d)", m.count, m.cluster, m.keep))
		}
	}
	if len(whole) > 0 {
		parts = append([]string{describeWhole(whole)}, parts...)
	}
	return strings.Join(parts, ", ") + "; " + d.why
}
