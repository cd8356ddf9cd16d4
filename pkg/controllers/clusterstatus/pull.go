package clusterstatus

import (
	"context"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/names"
)

// Pull clusters: the hub never dials the member. Its agent probes the
// member itself and writes the Cluster's status (see controllerdeps.Deps.PullCluster);
// the hub only judges whether the agent is alive, from the Lease the
// acting agent holds and renews (clusterv1alpha1.AgentLeaseName in the
// cluster's execution namespace). A Lease that is not renewed within its
// duration, or was released, makes the cluster Ready=Unknown; taints and
// cluster failover then follow exactly as for a Push member the hub cannot
// reach.

// agentReadiness judges a Pull cluster by its agent's Lease at now, both
// on the hub's clock, as is seen: when the hub first read the Lease's
// current holder and renewTime (see renewals). renewTime itself is on the
// agent's clock, which may be off from the hub's by any amount, so it is
// never compared with now. ok is true while the Lease is held and was
// seen renewed within its duration: the agent's own Ready condition
// stands, and recheck is when the Lease would expire. Otherwise rd is the
// Unknown readiness the hub records.
func agentReadiness(lease *coordinationv1.Lease, seen, now time.Time) (rd readiness, ok bool, recheck time.Duration) {
	if lease == nil || lease.Spec.RenewTime == nil {
		return readiness{status: metav1.ConditionUnknown, reason: clusterv1alpha1.ReasonAgentNotConnected,
			message: "no agent has connected for this Pull cluster yet: run `shepherd agent` in the member with the kubeconfig `shepherd register` printed"}, false, 0
	}
	holder := holderOf(lease)
	renewed := lease.Spec.RenewTime.Time
	if holder == "" {
		return readiness{status: metav1.ConditionUnknown, reason: clusterv1alpha1.ReasonAgentLeaseExpired,
			message: fmt.Sprintf("the agent released its lease at %s, on its clock (it stopped)", renewed.UTC().Format(time.RFC3339))}, false, 0
	}
	duration := 15 * time.Second
	if d := lease.Spec.LeaseDurationSeconds; d != nil && *d > 0 {
		duration = time.Duration(*d) * time.Second
	}
	expires := seen.Add(duration)
	if now.Before(expires) {
		return readiness{}, true, expires.Sub(now)
	}
	return readiness{status: metav1.ConditionUnknown, reason: clusterv1alpha1.ReasonAgentLeaseExpired,
		message: fmt.Sprintf("agent %s last renewed its lease at %s on its clock, seen by the hub at %s, more than its duration %s ago",
			holder, renewed.UTC().Format(time.RFC3339), seen.UTC().Format(time.RFC3339), duration)}, false, 0
}

func holderOf(lease *coordinationv1.Lease) string {
	if lease.Spec.HolderIdentity == nil {
		return ""
	}
	return *lease.Spec.HolderIdentity
}

// reconcilePull judges a Pull cluster on the hub: its agent's Lease
// decides between the agent's status and Unknown, and taints follow.
func (r *Reconciler) reconcilePull(ctx context.Context, log logr.Logger, cluster *clusterv1alpha1.Cluster) (reconcile.Result, error) {
	lease := &coordinationv1.Lease{}
	err := r.Client.Get(ctx, types.NamespacedName{Namespace: names.ExecutionNamespace(cluster.Name), Name: clusterv1alpha1.AgentLeaseName}, lease)
	switch {
	case apierrors.IsNotFound(err):
		lease = nil
	case err != nil:
		return reconcile.Result{}, err
	}
	now := r.clock.Now()
	seen := now
	if lease != nil && lease.Spec.RenewTime != nil {
		seen = r.renewals.seen(cluster.Name, lease, now)
	}
	rd, alive, recheck := agentReadiness(lease, seen, now)
	status := cluster.Status.DeepCopy()
	if !alive {
		meta.SetStatusCondition(&status.Conditions, metav1.Condition{
			Type: clusterv1alpha1.ClusterConditionReady, Status: rd.status, Reason: rd.reason, Message: rd.message,
			ObservedGeneration: cluster.Generation,
		})
		ready := meta.FindStatusCondition(status.Conditions, clusterv1alpha1.ClusterConditionReady)
		r.recordTransition(cluster, ready)
		if err := r.writeStatus(ctx, cluster, status, now); err != nil {
			return reconcile.Result{}, err
		}
	}
	if err := r.writeRoomTrusted(ctx, cluster); err != nil {
		return reconcile.Result{}, err
	}
	ready := meta.FindStatusCondition(cluster.Status.Conditions, clusterv1alpha1.ClusterConditionReady)
	if ready == nil {
		// The agent has not reported yet: nothing to taint for.
		return reconcile.Result{RequeueAfter: r.Options.ProbeInterval}, nil
	}
	clusterReady.WithLabelValues(cluster.Name).Set(boolGauge(ready.Status == metav1.ConditionTrue))
	taintRecheck, err := r.updateTaints(ctx, log, cluster, ready, r.readySince.since(cluster.Name, ready, now), now)
	if err != nil {
		return reconcile.Result{}, err
	}
	next := r.Options.ProbeInterval
	for _, d := range []time.Duration{recheck, taintRecheck} {
		if d > 0 && d < next {
			next = d
		}
	}
	return reconcile.Result{RequeueAfter: next}, nil
}
