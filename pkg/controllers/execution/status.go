package execution

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/clusterclient"
	"github.com/shepherd-io/shepherd/pkg/controllerdeps"
	"github.com/shepherd-io/shepherd/pkg/interpreter"
)

// Message caps: the Applied condition's message, and event notes, which
// the events API limits to 1024 characters.
const (
	maxMessage   = 2048
	maxEventNote = 1000
)

// apply applies every manifest, removes objects of manifests the Work no
// longer has, and records the outcome in the Work's status.
func (r *Reconciler) apply(ctx context.Context, work *workv1alpha1.Work, cluster *clusterv1alpha1.Cluster) (reconcile.Result, error) {
	begin := time.Now()
	clients, err := r.clientsFor(ctx, cluster)
	if err != nil {
		applyTotal.WithLabelValues("failure").Inc()
		if werr := r.setCondition(ctx, work, metav1.ConditionFalse, ReasonAppliedFailed, err.Error()); werr != nil {
			return reconcile.Result{}, werr
		}
		return reconcile.Result{}, err
	}
	key := workKey(work)
	manifests := decodeManifests(work)
	if err := checkScope(clients, work, manifests); err != nil {
		// Nothing is applied or pruned: a Work that reaches outside its
		// binding is not Shepherd's to act on until it is rewritten.
		applyTotal.WithLabelValues("failure").Inc()
		return reconcile.Result{}, r.setCondition(ctx, work, metav1.ConditionFalse, ReasonOutOfScope, err.Error())
	}
	full := r.applyDue(work)
	p := r.applyAll(ctx, clients, work, cluster, manifests, full)
	p.unservedAttempts = r.waiting.set(client.ObjectKeyFromObject(work), p.unserved > 0)

	status := work.Status.DeepCopy()
	meta.RemoveStatusCondition(&status.Conditions, workv1alpha1.WorkConditionDispatching)
	switch pruneErr := r.prune(ctx, clients, key, work.Status.ManifestStatuses, p.ids, p.unreachable, work.Spec.PreserveResourcesOnDeletion); {
	case pruneErr != nil:
		// Keep the old identifiers: they are how the next attempt knows
		// what is left to remove.
		p.failures = append(p.failures, fmt.Sprintf("removing objects dropped from the Work: %v", pruneErr))
		p.retry = true
	default:
		status.ManifestStatuses = manifestStatuses(work.Status.ManifestStatuses, p.ids, p.observed, p.results, metav1.NewTime(r.clock.Now()))
	}
	sum := r.lost.carry(key, work.Generation, summarize(manifests, p.results))
	cond, result := appliedCondition(work, cluster, len(manifests), p, sum)
	drifted, driftChanged := driftCondition(work, sum)
	if drifted != nil {
		controllerdeps.SetCondition(&status.Conditions, *drifted, r.clock)
	}
	applyTotal.WithLabelValues(result).Inc()
	applyDuration.WithLabelValues(result).Observe(time.Since(begin).Seconds())
	err = r.writeStatus(ctx, work, status, cond)
	r.lost.settle(key, work.Generation, sum, err)
	if err != nil {
		return reconcile.Result{}, err
	}
	r.reportDrift(work, drifted, driftChanged, sum)
	if full {
		r.stamps.Store(key, applyStamp{generation: work.Generation, at: time.Now()})
	}
	return r.afterApply(work, cluster, status.Conditions, p, full, cond.Message)
}

// appliedCondition is the Applied condition a pass leads to, and the
// result the metrics count it under: a failure says what kind (a
// conflict, a namespace's policy, an RBAC refusal) and wins over
// ReportDiff and held drift, which say so when nothing failed.
func appliedCondition(work *workv1alpha1.Work, cluster *clusterv1alpha1.Cluster, n int, p *pass, sum driftSummary) (metav1.Condition, string) {
	cond := metav1.Condition{Type: workv1alpha1.WorkConditionApplied, Status: metav1.ConditionTrue, Reason: ReasonAppliedSuccessful,
		Message: fmt.Sprintf("%d manifests applied to cluster %s", n, cluster.Name)}
	result := "success"
	switch {
	case len(p.failures) > 0:
		failures := p.failures
		if len(p.refusedRBAC) > 0 {
			failures = append([]string{rbacRefusal(cluster.Name, cluster.Spec.SyncMode == clusterv1alpha1.Pull, p.refusedRBAC)}, failures...)
		}
		cond.Status, cond.Reason, result = metav1.ConditionFalse, ReasonAppliedFailed, "failure"
		cond.Message = truncate(strings.Join(failures, "; "), maxMessage)
		switch {
		case p.conflicts > 0:
			cond.Reason, result = ReasonConflict, "conflict"
		case p.refusedNS > 0:
			cond.Reason = ReasonNamespacePolicy
		case len(p.refusedRBAC) > 0:
			cond.Reason = ReasonRBACEscalationForbidden
		}
	case work.Spec.ApplyStrategy.ReportsDiff():
		cond.Status, cond.Reason, result = metav1.ConditionFalse, workv1alpha1.ReasonReportDiff, "reportdiff"
		cond.Message = truncate(sum.reportMessage(n, cluster.Name), maxMessage)
	case sum.held > 0:
		cond.Status, cond.Reason, result = metav1.ConditionFalse, workv1alpha1.ReasonDriftHeld, "held"
		cond.Message = truncate(fmt.Sprintf("%d of %d manifests held back in cluster %s: their member objects drifted and applyStrategy.whenToApply is IfNotDrifted (see the Drifted condition)",
			sum.held, n, cluster.Name), maxMessage)
	}
	return cond, result
}

// namespaceTerminatingRetry is how soon a Work whose namespace was being
// deleted in the member is applied again.
const namespaceTerminatingRetry = 5 * time.Second

// afterApply says when to look at the Work again once its status is
// written.
func (r *Reconciler) afterApply(work *workv1alpha1.Work, cluster *clusterv1alpha1.Cluster, conditions []metav1.Condition, p *pass, full bool, message string) (reconcile.Result, error) {
	switch {
	case !full:
		return reconcile.Result{RequeueAfter: r.untilDue(work, conditions)}, nil
	case p.retry && p.unreachable == nil && p.unserved > 0 && p.unserved == len(p.failures):
		// Every failure is a kind the member does not serve yet: wait
		// for it (see kindRetry); the Applied condition says which.
		return reconcile.Result{RequeueAfter: kindRetry(p.unservedAttempts, r.Options.RetryBaseDelay, r.Options.RetryMaxDelay)}, nil
	case p.retry:
		return reconcile.Result{}, fmt.Errorf("applying Work %s to cluster %s: %s", workKey(work), cluster.Name, message)
	case p.terminating > 0:
		// The Applied condition says which namespace is going; it is
		// looked at again until it is gone and can be created anew.
		return reconcile.Result{RequeueAfter: namespaceTerminatingRetry}, nil
	case p.conflicts > 0 || p.refusedNS > 0 || len(p.refusedRBAC) > 0:
		// The conflict lasts until the member object goes or the policy
		// says Overwrite (which changes the Work); the resync notices the
		// former. An RBAC refusal lasts until the credentials change,
		// which wakes the Work (worksOfSecret).
		return reconcile.Result{RequeueAfter: r.Options.ResyncPeriod}, nil
	case len(p.failures) > 0:
		// Invalid manifests: retrying cannot help until the Work changes.
		return reconcile.Result{}, nil
	}
	return reconcile.Result{RequeueAfter: r.Options.ResyncPeriod}, nil
}

// checkScope checks every manifest of the Work against its scope (see
// scope.go) in the member's terms, before anything is written. A manifest
// the member cannot map is left to the apply, which reports it.
func checkScope(c *clusterclient.Clients, work *workv1alpha1.Work, manifests []manifest) error {
	s, err := scopeOf(work)
	if err != nil || s.binding == "" {
		return err
	}
	for _, mf := range manifests {
		if mf.err != nil {
			continue
		}
		id := mf.id
		if _, err := resourceFor(c, &id); err != nil {
			continue
		}
		if err := s.permits(id); err != nil {
			return err
		}
	}
	return nil
}

// permanent reports errors that retrying the same manifest cannot fix.
func permanent(err error) bool {
	return apierrors.IsInvalid(err) || apierrors.IsBadRequest(err)
}

// prune deletes the objects of previously applied identifiers that are no
// longer among the Work's manifests. Nothing is pruned while the member is
// unreachable.
func (r *Reconciler) prune(ctx context.Context, c *clusterclient.Clients, key string, prev []workv1alpha1.ManifestStatus, current []workv1alpha1.ResourceIdentifier, unreachable error, preserve bool) error {
	if unreachable != nil {
		return nil
	}
	var errs []error
	for _, ms := range prev {
		if ms.Identifier.Kind == "" || containsObject(current, ms.Identifier) {
			continue
		}
		if err := removeObject(ctx, c, key, ms.Identifier, preserve); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", describe(ms.Identifier), err))
			continue
		}
		logr.FromContextOrDiscard(ctx).Info("deleted object dropped from the Work", "work", key, "object", describe(ms.Identifier))
	}
	return errors.Join(errs...)
}

func containsObject(ids []workv1alpha1.ResourceIdentifier, id workv1alpha1.ResourceIdentifier) bool {
	for _, x := range ids {
		if sameObject(x, id) {
			return true
		}
	}
	return false
}

// manifestStatuses lists the current identifiers, keeping the status and
// health the status controller collected for objects that stay, and
// recording what each manifest's apply did (results: what was applied,
// and the drift).
func manifestStatuses(prev []workv1alpha1.ManifestStatus, ids []workv1alpha1.ResourceIdentifier, observed map[int]interpreter.Observation, results map[int]manifestResult, now metav1.Time) []workv1alpha1.ManifestStatus {
	out := make([]workv1alpha1.ManifestStatus, 0, len(ids))
	for i, id := range ids {
		ms := workv1alpha1.ManifestStatus{Identifier: id}
		// The unschedulable pods are the status controller's count (it
		// reads the member's pods): kept until it counts again.
		for _, p := range prev {
			if p.Identifier.Kind != "" && sameObject(p.Identifier, id) {
				ms.Status, ms.StatusTime, ms.Health, ms.HealthReason, ms.Generation = p.Status, p.StatusTime, p.Health, p.HealthReason, p.Generation
				ms.UnschedulableReplicas, ms.UnschedulableSince, ms.UnschedulableComponents = p.UnschedulableReplicas, p.UnschedulableSince, p.UnschedulableComponents
				ms.AppliedHash, ms.AppliedGeneration, ms.Drift = p.AppliedHash, p.AppliedGeneration, p.Drift
				ms.ResourceVersion, ms.AppliedResourceVersion = p.ResourceVersion, p.AppliedResourceVersion
				break
			}
		}
		if o, ok := observed[i]; ok {
			ms.SetStatus(o.Status, now)
			ms.Health, ms.HealthReason, ms.Generation = o.Health, o.HealthReason, o.Generation
			ms.ResourceVersion = o.ResourceVersion
		}
		if res, ok := results[i]; ok && res.verdict != "" {
			if res.hash != "" {
				ms.AppliedHash, ms.AppliedGeneration = res.hash, res.generation
				if res.generation == 0 && res.obj != nil {
					ms.AppliedResourceVersion = res.obj.GetResourceVersion()
				}
			}
			ms.Drift = res.drift
		}
		out = append(out, ms)
	}
	return out
}

// ReasonSuspended is the Dispatching condition's reason while the Work's
// dispatching is suspended.
const ReasonSuspended = "Suspended"

// markSuspended records that the Work is held: Dispatching=False, reason
// Suspended. Applying the Work again (once the suspension is lifted)
// removes the condition.
func (r *Reconciler) markSuspended(ctx context.Context, work *workv1alpha1.Work) error {
	status := work.Status.DeepCopy()
	changed := controllerdeps.SetCondition(&status.Conditions, metav1.Condition{
		Type: workv1alpha1.WorkConditionDispatching, Status: metav1.ConditionFalse, Reason: ReasonSuspended, ObservedGeneration: work.Generation,
		Message: fmt.Sprintf("Dispatching to cluster %s is suspended by the policy's spec.suspension: nothing is applied to or deleted from the member until it is lifted", clusterOf(work)),
	}, r.clock)
	if !changed {
		return nil
	}
	patched := work.DeepCopy()
	patched.Status = *status
	if err := r.Client.Status().Patch(ctx, patched, client.MergeFromWithOptions(work, client.MergeFromWithOptimisticLock{})); err != nil {
		return err
	}
	r.Recorder.Eventf(work, nil, corev1.EventTypeNormal, ReasonSuspended, "Suspend", "Dispatching to cluster %s is suspended", clusterOf(work))
	*work = *patched
	return nil
}

// setCondition records only the Applied condition.
func (r *Reconciler) setCondition(ctx context.Context, work *workv1alpha1.Work, status metav1.ConditionStatus, reason, message string) error {
	return r.writeStatus(ctx, work, work.Status.DeepCopy(), metav1.Condition{
		Type: workv1alpha1.WorkConditionApplied, Status: status, Reason: reason, Message: truncate(message, maxMessage),
	})
}

// writeStatus patches the Work's status if it changed, under an optimistic
// lock: the status controller writes manifestStatuses too, and the list is
// atomic. An event marks each change of the Applied condition.
func (r *Reconciler) writeStatus(ctx context.Context, work *workv1alpha1.Work, status *workv1alpha1.WorkStatus, cond metav1.Condition) error {
	prev := meta.FindStatusCondition(work.Status.Conditions, workv1alpha1.WorkConditionApplied)
	cond.ObservedGeneration = work.Generation
	controllerdeps.SetCondition(&status.Conditions, cond, r.clock)
	if equality.Semantic.DeepEqual(&work.Status, status) {
		return nil
	}
	patched := work.DeepCopy()
	patched.Status = *status
	if err := r.Client.Status().Patch(ctx, patched, client.MergeFromWithOptions(work, client.MergeFromWithOptimisticLock{})); err != nil {
		return err
	}
	if prev == nil || prev.Status != cond.Status || prev.Reason != cond.Reason || prev.Message != cond.Message {
		typ := corev1.EventTypeNormal
		if cond.Status != metav1.ConditionTrue {
			typ = corev1.EventTypeWarning
		}
		r.Recorder.Eventf(work, nil, typ, cond.Reason, "Apply", "%s", truncate(cond.Message, maxEventNote))
	}
	*work = *patched
	return nil
}

func truncate(s string, max int) string {
	if len(s) <= max {
		return s
	}
	return s[:max-3] + "..."
}
