package clustercleanup

import (
	"context"
	"fmt"
	"time"

	"github.com/shepherd-io/shepherd/pkg/conflicts"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/names"
)

// ControllerName names the controller in logs and events.
const ControllerName = "clustercleanup"

// Event reasons on Clusters.
const (
	ReasonCleaningUp = "CleaningUp"
	ReasonCleanedUp  = "CleanedUp"
)

// recheck bounds the wait for Works whose deletion events were missed.
const recheck = 10 * time.Second

// Reconciler adds the cleanup finalizer to Clusters and, when one is being
// deleted, removes its Works before letting it go.
type Reconciler struct {
	client   client.Client
	recorder events.EventRecorder
	// conflicts: the finalizer patches carry an optimistic lock (a merge
	// patch writes the whole list), which a Cluster's status write in
	// between breaks; retried quietly.
	conflicts *conflicts.Requeue
}

// clusterOfWork wakes the Cluster of a Work's execution namespace.
func clusterOfWork(_ context.Context, o client.Object) []reconcile.Request {
	if c, ok := names.ClusterOfExecutionNamespace(o.GetNamespace()); ok {
		return []reconcile.Request{{NamespacedName: client.ObjectKey{Name: c}}}
	}
	return nil
}

// Reconcile implements reconcile.Reconciler.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	res, err := r.reconcile(ctx, req)
	return r.conflicts.Result(req, res, err)
}

func (r *Reconciler) reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	cluster := &clusterv1alpha1.Cluster{}
	if err := r.client.Get(ctx, req.NamespacedName, cluster); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if cluster.DeletionTimestamp.IsZero() {
		if controllerutil.ContainsFinalizer(cluster, clusterv1alpha1.FinalizerCleanup) {
			return reconcile.Result{}, nil
		}
		orig := cluster.DeepCopy()
		controllerutil.AddFinalizer(cluster, clusterv1alpha1.FinalizerCleanup)
		return reconcile.Result{}, r.client.Patch(ctx, cluster, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{}), client.FieldOwner(workv1alpha1.FieldManager))
	}
	if !controllerutil.ContainsFinalizer(cluster, clusterv1alpha1.FinalizerCleanup) {
		return reconcile.Result{}, nil
	}
	left, err := r.deleteWorks(ctx, cluster)
	if err != nil {
		return reconcile.Result{}, err
	}
	if left > 0 {
		return reconcile.Result{RequeueAfter: recheck}, nil
	}
	// The execution namespace stays: a hub without a namespace controller
	// (the embedded one has none) would keep it Terminating forever, and
	// a cluster joined again under the same name needs it.
	orig := cluster.DeepCopy()
	controllerutil.RemoveFinalizer(cluster, clusterv1alpha1.FinalizerCleanup)
	if err := r.client.Patch(ctx, cluster, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{}), client.FieldOwner(workv1alpha1.FieldManager)); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	r.recorder.Eventf(cluster, nil, corev1.EventTypeNormal, ReasonCleanedUp, "Cleanup", "Every Work of the cluster is gone; the Cluster may go")
	logf.FromContext(ctx).Info("cluster cleaned up", "cluster", cluster.Name)
	return reconcile.Result{}, nil
}

// deleteWorks deletes the cluster's Works that are not being deleted yet
// and returns how many Works are left.
func (r *Reconciler) deleteWorks(ctx context.Context, cluster *clusterv1alpha1.Cluster) (int, error) {
	list := &workv1alpha1.WorkList{}
	if err := r.client.List(ctx, list, client.InNamespace(names.ExecutionNamespace(cluster.Name))); err != nil {
		return 0, err
	}
	deleted := 0
	for i := range list.Items {
		w := &list.Items[i]
		if !w.DeletionTimestamp.IsZero() {
			continue
		}
		if err := r.client.Delete(ctx, w, client.Preconditions{UID: &w.UID}); err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			return 0, err
		}
		deleted++
	}
	if deleted > 0 {
		r.recorder.Eventf(cluster, nil, corev1.EventTypeNormal, ReasonCleaningUp, "Cleanup",
			"%s", fmt.Sprintf("Deleting %d Works: their objects are removed from the member (or released where resources are preserved)", deleted))
	}
	return len(list.Items), nil
}
