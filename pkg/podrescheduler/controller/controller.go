// Package controller is the rescheduler controller: it watches pods, and
// when a pod of an opted-in workload fails on its node in a way a restart
// in place cannot fix (see Detection), it records the node in the
// workload's retry state and deletes the pod, so that the workload's
// controller recreates it and the scheduler plugin keeps the new pod off
// the nodes already tried. Owner-less pods that opted in are recreated by
// this controller itself.
//
// It is watch-based: pod updates that show a failure wake it, nothing
// lists pods periodically. Deletions and recreations are rate-limited
// globally (Options.ReschedulesPerSecond).
//
// A failure is handled exactly once: the failed pod's UID is recorded in
// the workload's annotations in the same optimistic-locked patch that
// counts the failure, so a retry after a lost delete, a stale cache or a
// restart finds the UID and only finishes the deletion. Pods are deleted
// with a UID precondition, so a StatefulSet's replacement pod with the
// same name is never hit.
//
// Events (on the pod and on the workload): Rescheduled, Recreated,
// RetryLimitReached, InvalidAnnotation, NameTaken. Metric:
// shepherd_podrescheduler_failures_total{reason,outcome}.
package controller

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"golang.org/x/time/rate"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/shepherd-io/shepherd/pkg/conflicts"
	"github.com/shepherd-io/shepherd/pkg/podrescheduler/annotations"
	"github.com/shepherd-io/shepherd/pkg/podrescheduler/workload"
)

// Name is the controller's name and its event reporter.
const Name = "shepherd-pod-rescheduler"

// Event reasons.
const (
	ReasonRescheduled       = "Rescheduled"
	ReasonRecreated         = "Recreated"
	ReasonRetryLimitReached = "RetryLimitReached"
	ReasonInvalidAnnotation = "InvalidAnnotation"
	ReasonNameTaken         = "NameTaken"
)

// eventAction is the action of every event this controller records.
const eventAction = "Reschedule"

// Reconciler handles failed pods; see the package documentation.
type Reconciler struct {
	client client.Client
	// apiReader reads the workloads the cache does not have (yet).
	apiReader client.Reader
	recorder  events.EventRecorder
	detection Detection
	limiter   *rate.Limiter
	workers   int
	// conflicts requeues a workload write that met a newer version: the
	// cached workload was behind (a write of the controller's own, or
	// the workload's controller's), and the next attempt reads it again.
	conflicts *conflicts.Requeue
}

// Setup adds the rescheduler controller to mgr.
func Setup(mgr ctrl.Manager, opts Options) error {
	opts = opts.withDefaults()
	r := &Reconciler{
		client:    mgr.GetClient(),
		apiReader: mgr.GetAPIReader(),
		recorder:  mgr.GetEventRecorder(Name),
		detection: *opts.Detection,
		limiter:   opts.limiter(),
		workers:   opts.Workers,
		conflicts: conflicts.NewRequeue(),
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named("podrescheduler").
		For(&corev1.Pod{}, builder.WithPredicates(r.failedPods())).
		WithOptions(controller.Options{MaxConcurrentReconciles: r.workers}).
		Complete(r)
}

// failedPods passes creations and updates of pods that are bound, not
// being deleted and failed: the only events the controller acts on.
func (r *Reconciler) failedPods() predicate.Predicate {
	return predicate.Funcs{
		CreateFunc:  func(e event.CreateEvent) bool { return r.failure(e.Object) != "" },
		UpdateFunc:  func(e event.UpdateEvent) bool { return r.failure(e.ObjectNew) != "" },
		DeleteFunc:  func(event.DeleteEvent) bool { return false },
		GenericFunc: func(event.GenericEvent) bool { return false },
	}
}

// failure is Detection.Failure for bound pods that are not being deleted.
func (r *Reconciler) failure(obj client.Object) string {
	pod, ok := obj.(*corev1.Pod)
	if !ok || pod.Spec.NodeName == "" || pod.DeletionTimestamp != nil {
		return ""
	}
	return r.detection.Failure(pod)
}

// Reconcile implements reconcile.Reconciler. A conflict is requeued
// quietly: it is not an error anyone should see.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	res, err := r.reconcile(ctx, req)
	return r.conflicts.Result(req, res, err)
}

func (r *Reconciler) reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	pod := &corev1.Pod{}
	if err := r.client.Get(ctx, req.NamespacedName, pod); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	reason := r.failure(pod)
	if reason == "" {
		return reconcile.Result{}, nil
	}
	ctx = logf.IntoContext(ctx, logf.FromContext(ctx).WithValues("node", pod.Spec.NodeName, "reason", reason))
	if metav1.GetControllerOf(pod) == nil {
		return r.reconcileOwnerless(ctx, pod, reason)
	}
	wl, err := workload.Of(ctx, pod, r.client, r.apiReader)
	if err != nil || wl == nil {
		return reconcile.Result{}, err
	}
	return r.reconcileWorkloadPod(ctx, pod, wl, reason)
}

// reconcileWorkloadPod counts the failure of pod in wl's annotations and,
// within the limit, deletes pod for wl's controller to recreate.
func (r *Reconciler) reconcileWorkloadPod(ctx context.Context, pod *corev1.Pod, wl client.Object, reason string) (reconcile.Result, error) {
	log := logf.FromContext(ctx).WithValues("workload", workload.Describe(wl))
	state, ok, err := annotations.Read(wl.GetAnnotations())
	if !ok {
		return reconcile.Result{}, nil
	}
	if err != nil {
		// Nothing to retry until a user fixes the annotation; the pod's
		// next status change brings it back here.
		r.recorder.Eventf(wl, pod, corev1.EventTypeWarning, ReasonInvalidAnnotation, eventAction, "not rescheduling pod %s: %v", pod.Name, err)
		return reconcile.Result{}, nil
	}
	uid := string(pod.UID)
	if i := slices.Index(state.FailedPods, uid); i >= 0 {
		if i < state.Retries {
			// Counted before, but the deletion did not happen or is not
			// visible yet: finish it.
			return reconcile.Result{}, r.deletePod(ctx, pod)
		}
		return reconcile.Result{}, nil
	}
	if state.Exhausted() {
		return reconcile.Result{}, nil
	}
	if d := r.wait(); d > 0 {
		return reconcile.Result{RequeueAfter: d}, nil
	}
	next := state.Record(pod.Spec.NodeName, uid)
	if err := r.writeState(ctx, wl, next); err != nil {
		return reconcile.Result{}, err
	}
	if next.Exhausted() {
		log.Info("pod failed after the last retry; leaving it alone", "pod", pod.Name, "retries", next.Retries)
		r.event(pod, wl, corev1.EventTypeWarning, ReasonRetryLimitReached,
			"pod %s failed on node %s (%s) after %d reschedules; retries exhausted, leaving it to its controller",
			pod.Name, pod.Spec.NodeName, reason, next.Retries)
		failures.WithLabelValues(reason, outcomeLimitReached).Inc()
		return reconcile.Result{}, nil
	}
	log.Info("rescheduling failed pod", "pod", pod.Name, "attempt", next.Count, "retries", next.Retries, "nodesTried", next.Nodes)
	r.event(pod, wl, corev1.EventTypeNormal, ReasonRescheduled,
		"pod %s failed on node %s (%s); deleting it so it is recreated away from %v (reschedule %d of %d)",
		pod.Name, pod.Spec.NodeName, reason, next.Nodes, next.Count, next.Retries)
	failures.WithLabelValues(reason, outcomeRescheduled).Inc()
	return reconcile.Result{}, r.deletePod(ctx, pod)
}

// writeState patches obj's annotations to s, failing with a conflict if
// obj changed since it was read: the count and the failed-pod list must
// never be written over a concurrent update.
func (r *Reconciler) writeState(ctx context.Context, obj client.Object, s annotations.State) error {
	updated := obj.DeepCopyObject().(client.Object)
	ann := maps.Clone(updated.GetAnnotations())
	s.Write(ann)
	updated.SetAnnotations(ann)
	if err := r.client.Patch(ctx, updated, client.MergeFromWithOptions(obj, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("recording the failure on %s: %w", workload.Describe(obj), err)
	}
	return nil
}

// deletePod deletes pod, but only this very pod (UID precondition); it
// being gone already is success.
func (r *Reconciler) deletePod(ctx context.Context, pod *corev1.Pod) error {
	err := r.client.Delete(ctx, pod, client.Preconditions{UID: &pod.UID})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return fmt.Errorf("deleting pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	return nil
}

// wait takes a token from the global rate limiter, or returns how long to
// wait for one (without taking it).
func (r *Reconciler) wait() time.Duration {
	res := r.limiter.Reserve()
	d := res.Delay()
	if d > 0 {
		res.Cancel()
	}
	return d
}

// event records the same event on the pod and on its workload: users look
// at either.
func (r *Reconciler) event(pod *corev1.Pod, wl client.Object, eventType, reason, note string, args ...any) {
	r.recorder.Eventf(pod, wl, eventType, reason, eventAction, note, args...)
	r.recorder.Eventf(wl, pod, eventType, reason, eventAction, note, args...)
}
