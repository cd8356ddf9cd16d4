package federatedhpa

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	autoscalingv1alpha1 "github.com/shepherd-io/shepherd/api/autoscaling/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/controllers/internal/bindingutil"
	"github.com/shepherd-io/shepherd/pkg/names"
)

// ReasonNoRoomInFleet is ScalingLimited's reason when the scheduler could
// not place the replicas the FederatedHPA asked for: the template has them,
// the members run the placement from before.
const ReasonNoRoomInFleet = "NoRoomInFleet"

// placement is what the scheduler made of the target's replicas, as its
// ResourceBinding says.
type placement struct {
	// clusters are the binding's active targets, by name.
	clusters []string
	// unplaced is the scheduler's reason when it could not place the
	// replica count the target has now; "" when it placed it or has not
	// yet tried.
	unplaced string
}

// placementOf reads the target's binding.
func (r *Reconciler) placementOf(ctx context.Context, t *target) (placement, error) {
	rb := &workv1alpha1.ResourceBinding{}
	key := client.ObjectKey{Namespace: t.namespace, Name: names.BindingName(t.ref.Kind, t.ref.Name)}
	if err := r.client.Get(ctx, key, rb); err != nil {
		return placement{}, fmt.Errorf("reading the binding %s of the target: %w", key, err)
	}
	return placementFrom(rb, t.replicas), nil
}

// placementFrom is what rb says of a target of replicas replicas. The
// scheduler's Unschedulable verdict counts only when it was about this
// count: the binding's replicas are the target's (the detector has copied
// the new count) and the condition observed the binding's generation (the
// scheduler has tried the copy). A scale the scheduler has not yet seen is
// not reported as limited.
func placementFrom(rb *workv1alpha1.ResourceBinding, replicas int32) placement {
	var p placement
	for _, tc := range bindingutil.ActiveTargets(rb.Spec.Clusters) {
		p.clusters = append(p.clusters, tc.Name)
	}
	slices.Sort(p.clusters)
	c := meta.FindStatusCondition(rb.Status.Conditions, workv1alpha1.ConditionScheduled)
	if c != nil && c.Status == metav1.ConditionFalse && c.Reason == workv1alpha1.ReasonUnschedulable &&
		c.ObservedGeneration == rb.Generation && rb.Spec.Replicas == replicas {
		p.unplaced = c.Message
	}
	return p
}

// roomLimited marks ScalingLimited True when the scheduler could not place
// the target's replicas (unplaced, its reason): the FederatedHPA raised the
// template, the fleet has no room for the count, and the members keep the
// placement from before. A limit of the bounds or the behavior, already
// True, keeps its reason and gains the scheduler's. The HorizontalPodAutoscaler
// knows no such limit: a cluster's scheduler leaves the pods Pending instead.
func roomLimited(conds []condition, replicas int32, unplaced string) {
	if unplaced == "" {
		return
	}
	msg := fmt.Sprintf("the fleet has no room for %d replicas of the target: the members run the placement from before, the scheduler says: %s", replicas, unplaced)
	for i := range conds {
		c := &conds[i]
		if c.kind != autoscalingv1alpha1.ConditionScalingLimited {
			continue
		}
		if c.status == corev1.ConditionTrue {
			c.message += "; " + msg
			return
		}
		c.status, c.reason, c.message = corev1.ConditionTrue, ReasonNoRoomInFleet, msg
		return
	}
}
