package clusterstatus

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/shepherd-io/shepherd/pkg/conflicts"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/clusterclient"
)

// ControllerName names the controller in logs, metrics and events.
const ControllerName = "cluster-status"

// Reconciler probes one member per reconcile and requeues itself every
// ProbeInterval.
type Reconciler struct {
	Client   client.Client
	Recorder events.EventRecorder
	Options  Options

	// clients reaches members; pullCluster is the Pull cluster an agent
	// serves (see controllerdeps.Deps).
	clients     *clusterclient.Cache
	pullCluster string
	// clock stamps lastProbeTime and the Ready condition's transition
	// (controllerdeps.Deps.Clock): an agent's own.
	clock clock.PassiveClock

	summaries *summarizers
	// renewals is when each Pull cluster's Lease was seen renewed, and
	// readySince when its Ready condition was seen to take its status.
	renewals   renewals
	readySince readySince
	// rightsChecked is when each member's rights were last checked.
	rightsChecked sync.Map
	// conflicts retries a status write that lost the race with the other
	// writer of a Pull cluster's status (its agent) quietly.
	conflicts *conflicts.Requeue
}

// Reconcile probes the member, updates the Cluster's status and taints,
// and schedules the next probe.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	res, err := r.reconcile(ctx, req)
	if r.conflicts == nil {
		return res, err
	}
	return r.conflicts.Result(req, res, err)
}

func (r *Reconciler) reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	log := logr.FromContextOrDiscard(ctx)
	cluster := &clusterv1alpha1.Cluster{}
	if err := r.Client.Get(ctx, req.NamespacedName, cluster); err != nil {
		if apierrors.IsNotFound(err) {
			r.forget(req.Name)
			return reconcile.Result{}, nil
		}
		return reconcile.Result{}, err
	}
	agent := r.pullCluster != ""
	switch {
	case !cluster.DeletionTimestamp.IsZero():
		r.forget(cluster.Name)
		return reconcile.Result{}, nil
	case agent && cluster.Name != r.pullCluster:
		return reconcile.Result{}, nil
	case !agent && cluster.Spec.SyncMode == clusterv1alpha1.Pull:
		r.forgetMember(cluster.Name)
		return r.reconcilePull(ctx, log, cluster)
	}

	begin, now := time.Now(), r.clock.Now()
	status := r.probe(ctx, log, cluster, now)
	ready := meta.FindStatusCondition(status.Conditions, clusterv1alpha1.ClusterConditionReady)
	if agent {
		// The agent reports; the hub taints, renews nothing and records
		// the events (an agent may not write events outside its namespace).
		probeDuration.WithLabelValues(string(ready.Status)).Observe(time.Since(begin).Seconds())
		if err := r.writeStatus(ctx, cluster, status, now); err != nil {
			return reconcile.Result{}, err
		}
		return reconcile.Result{RequeueAfter: r.Options.ProbeInterval}, nil
	}
	meta.SetStatusCondition(&status.Conditions, roomTrusted(cluster, status))
	if ready.Status != metav1.ConditionUnknown {
		// The member answers: its credentials can be renewed and checked,
		// also when it is not Ready (which missing rights may cause).
		r.checkCredentials(ctx, log, cluster, status, begin)
	}
	probeDuration.WithLabelValues(string(ready.Status)).Observe(time.Since(begin).Seconds())
	clusterReady.WithLabelValues(cluster.Name).Set(boolGauge(ready.Status == metav1.ConditionTrue))
	r.recordTransition(cluster, ready)

	if err := r.writeStatus(ctx, cluster, status, now); err != nil {
		return reconcile.Result{}, err
	}
	recheck, err := r.updateTaints(ctx, log, cluster, ready, ready.LastTransitionTime.Time, r.clock.Now())
	if err != nil {
		return reconcile.Result{}, err
	}
	next := r.Options.ProbeInterval
	if recheck > 0 && recheck < next {
		next = recheck
	}
	return reconcile.Result{RequeueAfter: next}, nil
}

// forget drops everything kept for a cluster that is gone.
func (r *Reconciler) forget(name string) {
	r.forgetMember(name)
	r.renewals.forget(name)
	r.readySince.forget(name)
	clusterReady.DeleteLabelValues(name)
}

// forgetMember drops what is kept for reaching a member, which the hub
// never does for a Pull cluster (its agent does).
func (r *Reconciler) forgetMember(name string) {
	r.rightsChecked.Delete(name)
	r.summaries.stop(name)
	r.clients.Forget(name)
}

// probe returns the status the member should have at now (a changed
// Ready condition's transition time). Facts that could not
// be collected this time (version, APIs, summaries) keep their last value:
// a member that is not ready has not lost its nodes.
func (r *Reconciler) probe(ctx context.Context, log logr.Logger, cluster *clusterv1alpha1.Cluster, now time.Time) *clusterv1alpha1.ClusterStatus {
	status := cluster.Status.DeepCopy()
	ctx, cancel := context.WithTimeout(ctx, r.Options.ProbeTimeout)
	defer cancel()

	var rd readiness
	clients, err := r.clients.ForCluster(ctx, cluster)
	switch {
	case errors.Is(err, clusterclient.ErrNoCredentials):
		rd = unreachable(ReasonNoCredentials, err)
	case err != nil:
		rd = unreachable(ReasonUnreachable, err)
	default:
		rd = probeReady(ctx, clients)
		if rd.status == metav1.ConditionTrue {
			if mismatch, ok := checkIdentity(ctx, clients, cluster); !ok {
				rd = mismatch
			}
		}
	}
	meta.SetStatusCondition(&status.Conditions, metav1.Condition{
		Type: clusterv1alpha1.ClusterConditionReady, Status: rd.status, Reason: rd.reason, Message: rd.message,
		ObservedGeneration: cluster.Generation, LastTransitionTime: metav1.NewTime(now),
	})
	if rd.status != metav1.ConditionTrue {
		return status
	}

	if v, err := clients.Kubernetes.Discovery().ServerVersion(); err != nil {
		log.Info("cannot read the member's version", "cluster", cluster.Name, "err", err.Error())
	} else {
		status.KubernetesVersion = displayVersion(v)
	}
	if apis, err := apiEnablements(clients.Kubernetes.Discovery()); apis != nil {
		status.APIEnablements = apis
		if err != nil {
			log.Info("some member APIs could not be discovered", "cluster", cluster.Name, "err", err.Error())
		}
	} else {
		log.Info("cannot discover the member's APIs", "cluster", cluster.Name, "err", err.Error())
	}
	sum, err := r.summaries.get(clients)
	if err == nil {
		var nodes *clusterv1alpha1.NodeSummary
		var resources *clusterv1alpha1.ResourceSummary
		if nodes, resources, err = sum.summarize(ctx); err == nil {
			status.NodeSummary, status.ResourceSummary = nodes, resources
		}
	}
	if err != nil {
		log.V(1).Info("node and resource summary not available yet", "cluster", cluster.Name, "err", err.Error())
	}
	return status
}

// writeStatus patches the status when it changed, and otherwise refreshes
// lastProbeTime when a workload's report came after it (reports.go), when
// it is ahead of now, and at most every ProbeTimeRefresh (see quiet).
func (r *Reconciler) writeStatus(ctx context.Context, cluster *clusterv1alpha1.Cluster, status *clusterv1alpha1.ClusterStatus, now time.Time) error {
	last := cluster.Status.LastProbeTime
	status.LastProbeTime = last
	changed := !equality.Semantic.DeepEqual(&cluster.Status, status)
	if !changed && quiet(last, now, r.Options.ProbeTimeRefresh) {
		newer, err := r.reportedSince(ctx, cluster.Name, last.Time)
		if err != nil {
			return err
		}
		if !newer {
			return nil
		}
	}
	t := metav1.NewTime(now)
	status.LastProbeTime = &t
	patched := cluster.DeepCopy()
	patched.Status = *status
	if err := r.Client.Status().Patch(ctx, patched, client.MergeFrom(cluster)); err != nil {
		return err
	}
	statusWrites.WithLabelValues(boolLabel(changed)).Inc()
	cluster.Status = patched.Status
	cluster.ResourceVersion = patched.ResourceVersion
	return nil
}

// quiet says whether a probe that found nothing changed may leave
// lastProbeTime alone (unless a report came after it): it is younger than
// refresh. A probe time ahead of now was written by a clock set later
// than this one (an agent restarted after its host's clock was set back):
// reports stamped by this clock would look older than it, and counted in
// a summary taken before them, until it is written again; so it is, at
// once.
func quiet(last *metav1.Time, now time.Time, refresh time.Duration) bool {
	return last != nil && !last.Time.After(now) && now.Sub(last.Time) < refresh
}

// updateTaints adds or removes the readiness taints. spec.taints is an
// atomic list shared with the user, so it is replaced as a whole under an
// optimistic lock: a concurrent edit makes the patch fail and the next
// reconcile recompute from the new list, rather than one writer losing the
// other's taints. since is when ready took its status (see desiredTaints).
func (r *Reconciler) updateTaints(ctx context.Context, log logr.Logger, cluster *clusterv1alpha1.Cluster, ready *metav1.Condition, since, now time.Time) (time.Duration, error) {
	ch := desiredTaints(cluster.Spec.Taints, ready, since, now, r.Options.taintRules())
	if len(ch.added) == 0 && len(ch.removed) == 0 {
		return ch.recheck, nil
	}
	patched := cluster.DeepCopy()
	patched.Spec.Taints = ch.taints
	if err := r.Client.Patch(ctx, patched, client.MergeFromWithOptions(cluster, client.MergeFromWithOptimisticLock{})); err != nil {
		return 0, err
	}
	for _, t := range ch.added {
		log.Info("tainted cluster", "cluster", cluster.Name, "taint", t.Key, "effect", t.Effect)
		r.Recorder.Eventf(cluster, nil, corev1.EventTypeWarning, "TaintAdded", "Taint",
			"Added taint %s:%s: %s for longer than the grace period", t.Key, t.Effect, ready.Reason)
		taintChanges.WithLabelValues(t.Key, "added").Inc()
	}
	for _, t := range ch.removed {
		log.Info("removed cluster taint", "cluster", cluster.Name, "taint", t.Key, "effect", t.Effect)
		r.Recorder.Eventf(cluster, nil, corev1.EventTypeNormal, "TaintRemoved", "Taint", "Removed taint %s:%s", t.Key, t.Effect)
		taintChanges.WithLabelValues(t.Key, "removed").Inc()
	}
	return ch.recheck, nil
}

// recordTransition emits an event when the Ready condition changes status.
func (r *Reconciler) recordTransition(cluster *clusterv1alpha1.Cluster, ready *metav1.Condition) {
	prev := meta.FindStatusCondition(cluster.Status.Conditions, clusterv1alpha1.ClusterConditionReady)
	if prev != nil && prev.Status == ready.Status {
		return
	}
	typ, reason := corev1.EventTypeNormal, "ClusterReady"
	switch ready.Status {
	case metav1.ConditionFalse:
		typ, reason = corev1.EventTypeWarning, "ClusterNotReady"
	case metav1.ConditionUnknown:
		typ, reason = corev1.EventTypeWarning, "ClusterUnreachable"
	}
	r.Recorder.Eventf(cluster, nil, typ, reason, "Probe", "%s: %s", ready.Reason, ready.Message)
}
