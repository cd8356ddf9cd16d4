// Package actions holds the changes a person asks of the hub, for every
// front end that offers them (the CLI and the dashboard): each is one
// request made with the caller's client, so the caller's identity and the
// hub's RBAC decide.
package actions

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	taskv1alpha1 "github.com/shepherd-io/shepherd/api/task/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
)

// BindingKey names a binding: an empty namespace with Cluster set names a
// ClusterResourceBinding.
type BindingKey struct {
	Cluster   bool
	Namespace string
	Name      string
}

// ConfirmEviction lets the old copy of a workload evicted from cluster go:
// it sets confirmed on the binding's purge mode Never eviction task, under
// an optimistic lock so a concurrent change of the tasks is not
// overwritten. The failover controller then drops the task and the copy is
// deleted. Confirming an already confirmed task changes nothing.
func ConfirmEviction(ctx context.Context, c client.Client, key BindingKey, cluster, fieldOwner string) error {
	return onFreshBinding(ctx, c, key, func(b workv1alpha1.BindingObject) error {
		orig := b.DeepCopyObject().(client.Object)
		tasks := b.GetBindingSpec().GracefulEvictionTasks
		for i := range tasks {
			if tasks[i].FromCluster != cluster {
				continue
			}
			if tasks[i].PurgeMode != policyv1alpha1.PurgeNever {
				return &StateError{fmt.Sprintf("the eviction from %s has purge mode %s: it needs no confirmation", cluster, tasks[i].PurgeMode)}
			}
			if tasks[i].Confirmed {
				return nil
			}
			tasks[i].Confirmed = true
			return c.Patch(ctx, b, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{}), client.FieldOwner(fieldOwner))
		}
		return &StateError{fmt.Sprintf("%s has no pending eviction from cluster %s", key.Name, cluster)}
	})
}

// onFreshBinding reads the binding key names and runs act on it, again on
// a fresh read when act's write conflicts: the controllers write a
// binding all the time (its status, the targets), and a person's action,
// decided again on what the binding holds now, must not fail for that.
// act's checks run on every read, so an action the binding no longer
// calls for is refused rather than written over a newer state.
func onFreshBinding(ctx context.Context, c client.Client, key BindingKey, act func(workv1alpha1.BindingObject) error) error {
	return retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		b, err := GetBinding(ctx, c, key)
		if err != nil {
			return err
		}
		return act(b)
	})
}

// StateError is an action the object's state does not call for (a
// confirmation of an eviction that needs none or is gone): the caller's
// view is out of date, not the hub at fault.
type StateError struct{ msg string }

func (e *StateError) Error() string { return e.msg }

// Reschedule creates a RescheduleTask with spec and returns it as created.
func Reschedule(ctx context.Context, c client.Client, spec taskv1alpha1.RescheduleTaskSpec, fieldOwner string) (*taskv1alpha1.RescheduleTask, error) {
	if len(spec.TargetRefResource)+len(spec.TargetRefPolicy) == 0 {
		return nil, fmt.Errorf("nothing to reschedule: name a workload or a policy")
	}
	task := &taskv1alpha1.RescheduleTask{ObjectMeta: metav1.ObjectMeta{GenerateName: "reschedule-"}, Spec: spec}
	if err := c.Create(ctx, task, client.FieldOwner(fieldOwner)); err != nil {
		return nil, fmt.Errorf("creating the RescheduleTask: %w", err)
	}
	return task, nil
}
