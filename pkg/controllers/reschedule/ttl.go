package reschedule

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	taskv1alpha1 "github.com/shepherd-io/shepherd/api/task/v1alpha1"
)

// completed counts and reports a task that just finished.
func (r *Reconciler) completed(ctx context.Context, task *taskv1alpha1.RescheduleTask) {
	c := meta.FindStatusCondition(task.Status.Conditions, taskv1alpha1.ConditionCompleted)
	tasksTotal.WithLabelValues(c.Reason).Inc()
	logf.FromContext(ctx).Info("task completed", "result", c.Reason, "message", c.Message)
	if c.Reason == ReasonAllSucceeded {
		r.recorder.Eventf(task, nil, "Normal", EventCompleted, actionReschedule, "%s", c.Message)
		return
	}
	r.recorder.Eventf(task, nil, "Warning", EventCompletedWithFailures, actionReschedule, "%s", c.Message)
}

// expire deletes a finished task whose ttlSecondsAfterFinished passed,
// or asks to be called again at that deadline.
func (r *Reconciler) expire(ctx context.Context, task *taskv1alpha1.RescheduleTask) (reconcile.Result, error) {
	ttl := task.Spec.TTLSecondsAfterFinished
	if ttl == nil || task.Status.CompletionTime == nil {
		return reconcile.Result{}, nil
	}
	deadline := task.Status.CompletionTime.Add(time.Duration(*ttl) * time.Second)
	if wait := deadline.Sub(r.now()); wait > 0 {
		return reconcile.Result{RequeueAfter: wait}, nil
	}
	uid := task.UID
	if err := r.client.Delete(ctx, task, client.Preconditions{UID: &uid}); client.IgnoreNotFound(err) != nil {
		return reconcile.Result{}, err
	}
	logf.FromContext(ctx).Info("task deleted after its ttlSecondsAfterFinished", "ttlSecondsAfterFinished", *ttl)
	return reconcile.Result{}, nil
}
