package workstatus

import (
	"context"
	"time"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/clusterclient"
	"github.com/shepherd-io/shepherd/pkg/interpreter"
)

// syncRecheck is when a Work is looked at again while a member informer
// has not finished its first list (its events would requeue it anyway).
const syncRecheck = time.Second

// workReconciler writes the member objects' status and health into their
// Work.
type workReconciler struct {
	client  client.Client
	clients *clusterclient.Cache
	in      interpreter.Interpreter
	members *members
	// pullCluster is the one cluster an agent reports for; empty on the
	// hub, which reports for Push clusters only.
	pullCluster string
	// clock stamps each status's statusTime (controllerdeps.Deps.Clock).
	clock clock.PassiveClock
}

// reports says whether this controller writes the cluster's Work statuses:
// the agent of a Pull cluster for its own, the hub for Push clusters.
func (r *workReconciler) reports(c *clusterv1alpha1.Cluster) bool {
	if r.pullCluster != "" {
		return c.Name == r.pullCluster
	}
	return c.Spec.SyncMode != clusterv1alpha1.Pull
}

func (r *workReconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	work := &workv1alpha1.Work{}
	if err := r.client.Get(ctx, req.NamespacedName, work); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if !work.DeletionTimestamp.IsZero() || len(work.Status.ManifestStatuses) == 0 {
		return reconcile.Result{}, nil
	}
	cluster := &clusterv1alpha1.Cluster{}
	if err := r.client.Get(ctx, types.NamespacedName{Name: clusterOfWork(work)}, cluster); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if !cluster.DeletionTimestamp.IsZero() || !r.reports(cluster) {
		return reconcile.Result{}, nil
	}
	clients, err := r.clients.ForCluster(ctx, cluster)
	if err != nil {
		return reconcile.Result{}, err
	}
	mi, err := r.members.forClients(clients)
	if err != nil {
		return reconcile.Result{}, err
	}

	status := work.Status.DeepCopy()
	key := work.Namespace + "/" + work.Name
	pending := false
	for i := range status.ManifestStatuses {
		ms := &status.ManifestStatuses[i]
		id := ms.Identifier
		if id.Resource == "" {
			continue // never mapped: the execution controller reports why
		}
		gvr := schema.GroupVersionResource{Group: id.Group, Version: id.Version, Resource: id.Resource}
		obj, synced, err := mi.get(gvr, id.Namespace, id.Name)
		if err != nil {
			return reconcile.Result{}, err
		}
		if !synced {
			pending = true
			continue
		}
		if obj != nil && obj.GetAnnotations()[workv1alpha1.AnnotationWork] != key {
			obj = nil // another Work's object: not ours to report
		}
		o, err := interpreter.Observe(r.in, obj)
		if err != nil {
			return reconcile.Result{}, err
		}
		// This process's clock: it also stamps the Cluster's lastProbeTime
		// (see ManifestStatus.StatusTime).
		ms.SetStatus(o.Status, metav1.NewTime(r.clock.Now()))
		ms.Health, ms.HealthReason, ms.Generation = o.Health, o.HealthReason, o.Generation
		ms.ResourceVersion = o.ResourceVersion
		ms.UnschedulableReplicas, ms.UnschedulableSince, ms.UnschedulableComponents = 0, nil, nil
		sel, ok := r.in.PodSelector(obj)
		if !ok {
			mi.unwatchPods(req.NamespacedName)
			continue
		}
		pods := mi.pods()
		pods.watch(req.NamespacedName, id.Namespace, sel)
		matched, synced := pods.matching(id.Namespace, sel)
		if !synced {
			pending = true
			continue
		}
		ms.UnschedulableReplicas, ms.UnschedulableSince = unschedulable(matched)
		if names, of, ok := r.in.PodComponents(obj); ok {
			ms.UnschedulableComponents = unschedulableComponents(matched, names, of)
		}
	}
	if !sameManifestStatuses(work.Status.ManifestStatuses, status.ManifestStatuses) {
		patched := work.DeepCopy()
		patched.Status = *status
		if err := r.client.Status().Patch(ctx, patched, client.MergeFromWithOptions(work, client.MergeFromWithOptimisticLock{})); err != nil {
			if apierrors.IsConflict(err) {
				// The execution controller wrote first; the event of its
				// write brings the Work back here.
				logr.FromContextOrDiscard(ctx).V(1).Info("Work changed meanwhile", "work", key)
				return reconcile.Result{}, nil
			}
			return reconcile.Result{}, err
		}
		statusWrites.WithLabelValues("work").Inc()
	}
	if pending {
		return reconcile.Result{RequeueAfter: syncRecheck}, nil
	}
	return reconcile.Result{}, nil
}
