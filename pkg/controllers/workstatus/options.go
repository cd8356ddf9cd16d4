// Package workstatus carries the status of what Shepherd applied back to
// the hub, in three steps:
//
//  1. member object -> Work: a per-member informer (one per resource in
//     use, only objects labelled app.kubernetes.io/managed-by=shepherd)
//     notices status changes and writes each manifest's raw status and
//     health (Interpreter.Health) into the Work's status.manifestStatuses,
//     with, for kinds with a pod selector (Interpreter.PodSelector), how
//     many of the workload's pods the member's scheduler cannot place and
//     since when (an informer of the member's Pending pods only, started
//     on first use; see pods.go);
//  2. Works -> binding: the Works of a binding (found through the Work's
//     binding annotation or labels) become the binding's
//     status.aggregatedStatus, one item per cluster, with the timestamps
//     failover relies on (firstCollectedTime, settled, unhealthySince);
//  3. binding -> template: for built-in workload kinds the members'
//     counters (e.g. a Deployment's readyReplicas) are summed into the
//     template's status on the hub, so `kubectl get deploy` on the hub
//     shows the fleet-wide picture.
//
// Step 2 is one generic code path for ResourceBinding and
// ClusterResourceBinding.
//
// Member informers start when a Work first needs a resource of that
// member, restart when the member's credentials change, and stop when its
// Cluster goes. Resources no longer used keep their informer until then:
// the set of kinds Shepherd propagates is small and stable.
package workstatus

import (
	"time"
)

// Defaults of Options.
const (
	DefaultWorkers        = 4
	DefaultCoalesceWindow = time.Second
	// DefaultPodMetricsPeriod is a HorizontalPodAutoscaler's sync period.
	DefaultPodMetricsPeriod = 15 * time.Second
)

// Options configure the Reconciler. Zero values take the defaults.
type Options struct {
	// Workers is the concurrency of each of the controllers (default 4).
	Workers int
	// CoalesceWindow is how long a change waits before it is reported
	// (default 1 s; negative reports at once): a member object's change
	// before it is written into its Work, a Work's change before it is
	// aggregated into its binding. A rollout changes a Deployment's status
	// four or five times in a second or two; within the window those
	// changes, and the changes of a binding's Works in several members,
	// become one write instead of one each. Failover's clocks are not
	// affected: they run on the times recorded, not on when they are
	// written.
	CoalesceWindow time.Duration
	// PodMetricsPeriod is how often an agent samples the pods and metrics
	// of a Work labelled workv1alpha1.LabelPodMetrics into its status
	// (default 15 s): at most one sample per Work per period.
	PodMetricsPeriod time.Duration
}

func (o Options) withDefaults() Options {
	if o.Workers <= 0 {
		o.Workers = DefaultWorkers
	}
	if o.PodMetricsPeriod <= 0 {
		o.PodMetricsPeriod = DefaultPodMetricsPeriod
	}
	switch {
	case o.CoalesceWindow == 0:
		o.CoalesceWindow = DefaultCoalesceWindow
	case o.CoalesceWindow < 0:
		o.CoalesceWindow = 0
	}
	return o
}
