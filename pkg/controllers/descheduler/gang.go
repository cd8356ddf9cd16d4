package descheduler

import (
	"fmt"
	"slices"
	"strings"
	"time"

	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/controllers/internal/bindingutil"
	"github.com/shepherd-io/shepherd/pkg/placement"
)

// A gang (a workload of several pod templates, spec.components) runs
// whole or not at all: every selected cluster runs every replica of every
// component. Lowering a cluster's share would leave it part of a gang, so
// a gang with replicas unschedulable in a cluster past the threshold is
// moved off that cluster whole, the way failover evicts: the target
// leaves the placement (Unscheduled), the eviction history keeps the
// cluster out of the scheduler's choice for the block window, and a
// graceful eviction task keeps the old copy until the gang is Healthy on
// its new clusters or the grace period ends.
const (
	// ReasonGangMoved (True): a gang was moved whole off clusters.
	ReasonGangMoved = "GangMoved"
	// EvictionReason is the reason of the descheduler's eviction history
	// entries and graceful eviction tasks.
	EvictionReason = "GangUnschedulable"
	// Producer is written in the graceful eviction tasks the descheduler
	// creates.
	Producer = "shepherd-descheduler"
)

// isGang says whether the binding is a workload of several pod templates:
// its spec.components, whatever its targets record of them.
func isGang(spec *workv1alpha1.BindingSpec) bool { return len(spec.Components) > 0 }

// A gang whose components the scheduler divided (spec.dividedComponents)
// runs the replicas of each divisible component in several clusters,
// apart from the other components: those are divided replicas, and they
// are taken back from a cluster as a Deployment's divided by dynamic
// weights are. When every unschedulable pod a cluster reports is of a
// divisible component (its status names each pod's component), each such
// component's share there is lowered by its Pending pods, never below 0;
// the binding keeps the component's replicas, so the scheduler's Steady
// cycle places the difference again by room (the head stays where it is).
// When any of them is of a component that is not divisible (the head), or
// the cluster does not tell its pods apart, the cluster is left whole as
// any gang's is: a pending head moves the head, and the shares on its
// cluster with it.

// componentMove lowers one divisible component's share on a cluster by
// count, to keep.
type componentMove struct {
	name        string
	count, keep int32
}

// dividedMove is the move of a divided gang's divisible components off
// t's cluster, by the unschedulable pods it reports (it); ok is false
// when the cluster must be left whole instead (see above). A move of no
// components (the shares there already lowered) moves nothing.
func dividedMove(spec *workv1alpha1.BindingSpec, t workv1alpha1.TargetCluster, it *workv1alpha1.AggregatedStatusItem) (move, bool) {
	if spec.DividedComponents == nil || len(it.UnschedulableComponents) == 0 {
		return move{}, false
	}
	m := move{cluster: t.Name, since: it.UnschedulableSince.Time, pending: pendingComponents(spec.Components, it.UnschedulableComponents)}
	var named int32
	for _, u := range it.UnschedulableComponents {
		j := slices.IndexFunc(spec.Components, func(c workv1alpha1.Component) bool { return c.Name == u.Name })
		if j < 0 || !spec.Components[j].Divisible {
			return move{}, false
		}
		named += u.Replicas
		var share int32
		if k := slices.IndexFunc(t.Components, func(c workv1alpha1.TargetComponent) bool { return c.Name == u.Name }); k >= 0 {
			share = t.Components[k].Replicas
		}
		keep := max(share-u.Replicas, 0)
		if n := share - keep; n > 0 {
			m.components = append(m.components, componentMove{name: u.Name, count: n, keep: keep})
			m.count += n
		}
	}
	if named < it.UnschedulableReplicas {
		// Pods of no component Pending too: which part they are is not
		// known, so the cluster is left whole.
		return move{}, false
	}
	return m, true
}

// lowerComponents lowers the shares m moves on its cluster's active
// target; a component left with none is no longer listed there.
func lowerComponents(spec *workv1alpha1.BindingSpec, m move) {
	for i := range spec.Clusters {
		t := &spec.Clusters[i]
		if t.Name != m.cluster || !bindingutil.IsActive(*t) {
			continue
		}
		for _, cm := range m.components {
			for k := range t.Components {
				if t.Components[k].Name == cm.name {
					t.Components[k].Replicas = cm.keep
				}
			}
		}
		t.Components = slices.DeleteFunc(t.Components, func(c workv1alpha1.TargetComponent) bool { return c.Replicas == 0 })
	}
}

// describeComponents says what a move of components took: `2 of component
// "workers" from member2 (keeps 3)`.
func describeComponents(m move) string {
	parts := make([]string, len(m.components))
	for i, c := range m.components {
		parts[i] = fmt.Sprintf("%d of component %q from %s (keeps %d)", c.count, c.name, m.cluster, c.keep)
	}
	return strings.Join(parts, ", ")
}

// keptOut says how long a cluster a gang left stays out of its placement:
// the block window the scheduler's ClusterEviction filter applies to the
// eviction history.
func keptOut(f *policyv1alpha1.FailoverBehavior) string {
	if w := placement.BlockWindow(f); w > 0 {
		return "for " + w.String()
	}
	return "until the eviction history is cleared"
}

// gracePeriod is the old copy's grace period: the policy's
// failover.application.gracePeriodSeconds, else the default.
func gracePeriod(f *policyv1alpha1.FailoverBehavior) *int32 {
	if f != nil && f.Application != nil && f.Application.GracePeriodSeconds != nil {
		return f.Application.GracePeriodSeconds
	}
	g := policyv1alpha1.DefaultGracePeriodSeconds
	return &g
}

// gangWhy is the why of a gang's move.
func gangWhy(spec *workv1alpha1.BindingSpec, thr time.Duration) string {
	return fmt.Sprintf("unschedulable for longer than %s; a gang runs whole or not at all: the scheduler places it again, the clusters it left kept out %s",
		thr, keptOut(spec.Failover))
}

// eviction is the eviction that moves a gang whole off m's cluster.
func eviction(spec *workv1alpha1.BindingSpec, m move, thr time.Duration) bindingutil.Eviction {
	return bindingutil.Eviction{
		Cluster: m.cluster, Reason: EvictionReason, Producer: Producer,
		Message: fmt.Sprintf("%d replicas of the gang unschedulable since %s, longer than %s: moved whole%s",
			m.count, m.since.UTC().Format(time.RFC3339), thr, also(m.pending)),
		Purge:              policyv1alpha1.PurgeGracefully,
		GracePeriodSeconds: gracePeriod(spec.Failover),
	}
}

// describeWhole says what a gang's move took: "the gang whole from
// member2 (3 of its replicas unschedulable there)".
func describeWhole(moves []move) string {
	parts := make([]string, 0, len(moves))
	for _, m := range moves {
		parts = append(parts, fmt.Sprintf("%s (%d of its replicas unschedulable there%s)", m.cluster, m.count, also(m.pending)))
	}
	return wholePrefix + strings.Join(parts, ", ")
}

// wholePrefix starts the description of a gang's move off clusters.
const wholePrefix = "the gang whole from "

// gangNote is the event of a gang's move off one cluster.
func gangNote(spec *workv1alpha1.BindingSpec, m move, why string) string {
	return fmt.Sprintf("Moved the gang whole from cluster %s: %d of its replicas unschedulable there since %s%s (%s); the old copy stays until the gang is Healthy on its new clusters or %ds pass",
		m.cluster, m.count, m.since.UTC().Format(time.RFC3339), also(m.pending), why, *gracePeriod(spec.Failover))
}

// maxNamedComponents is how many components pendingComponents names; the
// others are counted, so that a message stays short whatever the gang.
const maxNamedComponents = 4

// pendingComponents says which components of a gang a cluster cannot run,
// from its aggregated status (unschedulable, in the workload's order), with
// each one's replicas in the binding's spec.components: `component
// "workers": 2 of 4 Pending since 2026-03-08T08:00:00Z, component
// "ray-head": 1 of 1 Pending since ...`. A component the spec does not
// list is named without its total. "" when the cluster reports none: the
// pods of the gang's kind are not told apart by component.
func pendingComponents(spec []workv1alpha1.Component, unschedulable []workv1alpha1.UnschedulableComponent) string {
	parts := make([]string, 0, min(len(unschedulable), maxNamedComponents+1))
	for i, u := range unschedulable {
		if i == maxNamedComponents {
			parts = append(parts, fmt.Sprintf("%d more components", len(unschedulable)-i))
			break
		}
		of := ""
		if j := slices.IndexFunc(spec, func(c workv1alpha1.Component) bool { return c.Name == u.Name }); j >= 0 {
			of = fmt.Sprintf(" of %d", spec[j].Replicas)
		}
		parts = append(parts, fmt.Sprintf("component %q: %d%s Pending since %s", u.Name, u.Replicas, of, u.Since.UTC().Format(time.RFC3339)))
	}
	return strings.Join(parts, ", ")
}

// also is "; " and pending, for a message that goes on to name the
// components; "" when there are none to name.
func also(pending string) string {
	if pending == "" {
		return ""
	}
	return "; " + pending
}
