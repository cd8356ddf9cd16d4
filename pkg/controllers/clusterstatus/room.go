package clusterstatus

import (
	"context"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/scheduler/framework"
)

// roomTrusted is the RoomTrusted condition of a cluster whose status is
// status: whether the room it reports is within spec.roomBounds (see
// framework.RoomClaimError, which the scheduler applies too).
func roomTrusted(cluster *clusterv1alpha1.Cluster, status *clusterv1alpha1.ClusterStatus) metav1.Condition {
	c := cluster.DeepCopy()
	c.Status = *status
	cond := metav1.Condition{Type: clusterv1alpha1.ClusterConditionRoomTrusted, Status: metav1.ConditionTrue,
		Reason: clusterv1alpha1.ReasonRoomWithinBounds, Message: "the reported room is within spec.roomBounds", ObservedGeneration: cluster.Generation}
	if err := framework.RoomClaimError(c); err != nil {
		cond.Status, cond.Reason = metav1.ConditionFalse, clusterv1alpha1.ReasonRoomOutOfBounds
		cond.Message = "the scheduler ignores the room this cluster reports and places no replica that needs room on it: " + err.Error()
	}
	return cond
}

// writeRoomTrusted records a Pull cluster's RoomTrusted condition, judged
// on the hub from what the agent reported, when it changed. The agent
// writes the rest of the status from its cache, keeping conditions it did
// not set; the optimistic lock keeps either write from undoing the other
// (a conflict is retried by the caller).
func (r *Reconciler) writeRoomTrusted(ctx context.Context, cluster *clusterv1alpha1.Cluster) error {
	cond := roomTrusted(cluster, &cluster.Status)
	if old := meta.FindStatusCondition(cluster.Status.Conditions, cond.Type); old != nil &&
		old.Status == cond.Status && old.Reason == cond.Reason && old.Message == cond.Message && old.ObservedGeneration == cond.ObservedGeneration {
		return nil
	}
	patched := cluster.DeepCopy()
	meta.SetStatusCondition(&patched.Status.Conditions, cond)
	if err := r.Client.Status().Patch(ctx, patched, client.MergeFromWithOptions(cluster, client.MergeFromWithOptimisticLock{})); err != nil {
		return err
	}
	if cond.Status == metav1.ConditionFalse {
		r.Recorder.Eventf(cluster, nil, "Warning", clusterv1alpha1.ReasonRoomOutOfBounds, "CheckRoom", "%s", cond.Message)
	}
	cluster.Status, cluster.ResourceVersion = patched.Status, patched.ResourceVersion
	return nil
}
