package reschedule

import (
	"context"
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/retry"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	taskv1alpha1 "github.com/shepherd-io/shepherd/api/task/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/controllers/internal/bindingutil"
)

// Reasons of the Completed condition, and event reasons on tasks.
const (
	ReasonInProgress            = "InProgress"
	ReasonAllSucceeded          = "AllSucceeded"
	ReasonSomeFailed            = "SomeFailed"
	EventRescheduling           = "Rescheduling"
	EventTargetFailed           = "TargetFailed"
	EventCompleted              = "Completed"
	EventCompletedWithFailures  = "CompletedWithFailures"
	actionReschedule            = "Reschedule"
	maxConditionMessageFailures = 3
)

// Reconciler runs RescheduleTasks.
type Reconciler struct {
	client    client.Client
	apiReader client.Reader
	recorder  events.EventRecorder
	// poll spaces the rechecks of a task with Pending targets.
	poll workqueue.TypedRateLimiter[reconcile.Request]
	opts Options
	now  func() time.Time
}

// Reconcile implements reconcile.Reconciler.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	task := &taskv1alpha1.RescheduleTask{}
	if err := r.client.Get(ctx, req.NamespacedName, task); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if task.DeletionTimestamp != nil {
		return reconcile.Result{}, nil
	}
	if meta.IsStatusConditionTrue(task.Status.Conditions, taskv1alpha1.ConditionCompleted) {
		return r.expire(ctx, task)
	}
	log := logf.FromContext(ctx)
	orig := task.DeepCopy()
	targets := task.Status.Targets
	if len(targets) == 0 {
		var err error
		if targets, err = r.resolve(ctx, &task.Spec); err != nil {
			return reconcile.Result{}, err
		}
		log.Info("rescheduling", "targets", len(targets))
		r.recorder.Eventf(task, nil, "Normal", EventRescheduling, actionReschedule, "Rescheduling %d workloads", len(targets))
	} else {
		targets = append([]taskv1alpha1.TargetStatus(nil), targets...)
	}
	at := task.CreationTimestamp
	for i := range targets {
		if targets[i].Phase != taskv1alpha1.TargetPending {
			continue
		}
		phase, reason, err := r.progress(ctx, targets[i].Binding, at)
		if err != nil {
			return reconcile.Result{}, err
		}
		targets[i].Phase, targets[i].Reason = phase, reason
	}
	now := metav1.NewTime(r.now())
	var finished []taskv1alpha1.TargetStatus
	for i := range targets {
		if t := &targets[i]; t.Phase != taskv1alpha1.TargetPending && t.FinishedAt == nil {
			t.FinishedAt = &now
			finished = append(finished, *t)
		}
	}
	task.Status.Targets = targets
	done := setCompleted(&task.Status, task.Generation, now)
	if !equality.Semantic.DeepEqual(orig.Status, task.Status) {
		if err := r.client.Status().Patch(ctx, task, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{}), client.FieldOwner(workv1alpha1.FieldManager)); err != nil {
			return reconcile.Result{}, client.IgnoreNotFound(err)
		}
	}
	// Counted and reported once written, so that a conflict retried does
	// not count a target twice.
	for _, t := range finished {
		targetsTotal.WithLabelValues(string(t.Phase)).Inc()
		log.Info("target finished", "resource", describeResource(t.Resource), "phase", t.Phase, "reason", t.Reason)
		if t.Phase == taskv1alpha1.TargetFailed {
			r.recorder.Eventf(task, nil, "Warning", EventTargetFailed, actionReschedule, "%s", bindingutil.Note(describeResource(t.Resource)+": "+t.Reason))
		}
	}
	if !done {
		// Binding events wake the task through the index on its Pending
		// targets, but the first of them may come before the cache holds
		// the status naming those targets: poll too, backing off.
		return reconcile.Result{RequeueAfter: r.poll.When(req)}, nil
	}
	r.poll.Forget(req)
	r.completed(ctx, task)
	return r.expire(ctx, task)
}

// progress stamps a Pending target's binding when it needs it and returns
// the target's phase.
func (r *Reconciler) progress(ctx context.Context, key string, at metav1.Time) (taskv1alpha1.TargetPhase, string, error) {
	b, err := r.binding(ctx, key)
	if err != nil || b == nil {
		phase, reason := evaluate(nil, key, at)
		return phase, reason, err
	}
	if needsStamp(b, at) && b.GetDeletionTimestamp() == nil {
		if b, err = r.stamp(ctx, key, at); err != nil || b == nil {
			phase, reason := evaluate(nil, key, at)
			return phase, reason, err
		}
	}
	phase, reason := evaluate(b, key, at)
	return phase, reason, nil
}

// binding reads a binding from the cache, and from the API server when
// the cache does not hold it (yet); nil when it does not exist.
func (r *Reconciler) binding(ctx context.Context, key string) (workv1alpha1.BindingObject, error) {
	b := parseBindingKey(key)
	err := r.client.Get(ctx, client.ObjectKeyFromObject(b), b)
	if apierrors.IsNotFound(err) {
		err = r.apiReader.Get(ctx, client.ObjectKeyFromObject(b), b)
	}
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	return b, err
}

// stamp sets the binding's spec.rescheduleTriggeredAt to at unless it
// already holds a later one, reading fresh and writing with an optimistic
// lock so that two tasks never move the stamp back. It returns the
// binding as written, nil when it no longer exists.
func (r *Reconciler) stamp(ctx context.Context, key string, at metav1.Time) (workv1alpha1.BindingObject, error) {
	var out workv1alpha1.BindingObject
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		b := parseBindingKey(key)
		if err := r.apiReader.Get(ctx, client.ObjectKeyFromObject(b), b); err != nil {
			return err
		}
		out = b
		if !needsStamp(b, at) {
			return nil
		}
		orig := b.DeepCopyObject().(workv1alpha1.BindingObject)
		b.GetBindingSpec().RescheduleTriggeredAt = &at
		return r.client.Patch(ctx, b, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{}), client.FieldOwner(workv1alpha1.FieldManager))
	})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err == nil {
		logf.FromContext(ctx).V(1).Info("binding stamped", "binding", key, "rescheduleTriggeredAt", at)
	}
	return out, err
}

// setCompleted sets the Completed condition and, once every target
// finished, the completion time. It reports whether the task is complete.
func setCompleted(s *taskv1alpha1.RescheduleTaskStatus, generation int64, now metav1.Time) bool {
	var pending int
	var failures []string
	for _, t := range s.Targets {
		switch t.Phase {
		case taskv1alpha1.TargetPending:
			pending++
		case taskv1alpha1.TargetFailed:
			failures = append(failures, describeResource(t.Resource))
		}
	}
	total := len(s.Targets)
	c := metav1.Condition{Type: taskv1alpha1.ConditionCompleted, ObservedGeneration: generation}
	switch {
	case pending > 0:
		c.Status, c.Reason = metav1.ConditionFalse, ReasonInProgress
		c.Message = fmt.Sprintf("%d of %d targets finished.", total-pending, total)
	case len(failures) > 0:
		c.Status, c.Reason = metav1.ConditionTrue, ReasonSomeFailed
		c.Message = fmt.Sprintf("%d of %d targets failed: %s.", len(failures), total, listed(failures))
	default:
		c.Status, c.Reason = metav1.ConditionTrue, ReasonAllSucceeded
		c.Message = fmt.Sprintf("All %d targets were rescheduled.", total)
	}
	meta.SetStatusCondition(&s.Conditions, c)
	if pending > 0 {
		return false
	}
	if s.CompletionTime == nil {
		s.CompletionTime = &now
	}
	return true
}

// listed names the first failed targets in the condition message; the
// targets list them all.
func listed(items []string) string {
	if len(items) <= maxConditionMessageFailures {
		return strings.Join(items, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(items[:maxConditionMessageFailures], ", "), len(items)-maxConditionMessageFailures)
}
