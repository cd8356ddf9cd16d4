package execution

import (
	"context"
	"errors"
	"fmt"

	"github.com/shepherd-io/shepherd/pkg/conflicts"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/clusterclient"
	"github.com/shepherd-io/shepherd/pkg/interpreter"
	"github.com/shepherd-io/shepherd/pkg/names"
)

// ControllerName names the controller in logs, metrics and events.
const ControllerName = "execution"

// Reasons of the Work's Applied condition.
const (
	ReasonAppliedSuccessful  = "AppliedSuccessful"
	ReasonAppliedFailed      = "AppliedFailed"
	ReasonClusterNotFound    = "ClusterNotFound"
	ReasonClusterUnreachable = "ClusterUnreachable"
	// ReasonClusterIdentityMismatch: the member answering is not the
	// cluster that was joined; nothing is applied until it is.
	ReasonClusterIdentityMismatch = "ClusterIdentityMismatch"
)

// Reconciler applies Works to their member clusters.
type Reconciler struct {
	Client   client.Client
	Recorder events.EventRecorder
	Options  Options

	// From controllerdeps.Deps: the member clients; the interpreter that
	// judges each object an apply returns, so that its status and health
	// reach the Work with the Applied condition (the work status
	// controller's: the two must agree); the fence asked before every
	// member write; the Pull cluster an agent serves (only its Works are
	// applied, and no credentials Secret is watched; unset, the Works of
	// Push clusters only); and the reader of hub namespaces (their Pod
	// Security labels): an agent, which may get but not list them, reads
	// them uncached.
	clients       *clusterclient.Cache
	interpreter   *interpreter.Layered
	fence         func() error
	pullCluster   string
	hubNamespaces client.Reader
	// clock stamps what the Work's status records (statusTime, drift's
	// firstSeenTime, conditions' transitions) and times the put-back of
	// a drift from the Drifted condition's transition (controllerdeps.Deps.Clock).
	clock clock.PassiveClock

	breaker *breaker
	limiter *limiter
	// stamps remembers each Work's last full apply (see applyDue).
	stamps stamps
	// waiting are the Works whose last apply met a kind their member did
	// not serve (see kindWaiters).
	waiting kindWaiters
	// lost carries overwrites whose status write was refused (see
	// lostOverwrites).
	lost lostOverwrites
	// conflicts turns a write that lost a race (the work status controller
	// writes the Work's status too) into a quiet, rate-limited retry; nil
	// returns conflicts as errors.
	conflicts *conflicts.Requeue

	// beforeCreate, when set (by tests), runs between reading that a member
	// object is missing and creating it: the window in which someone else
	// may create it.
	beforeCreate func(name string)
}

// Reconcile applies a Work, or cleans up after a deleted one.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	res, err := r.reconcile(ctx, req)
	if r.conflicts == nil {
		return res, err
	}
	return r.conflicts.Result(req, res, err)
}

func (r *Reconciler) reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	log := logr.FromContextOrDiscard(ctx)
	work := &workv1alpha1.Work{}
	if err := r.Client.Get(ctx, req.NamespacedName, work); err != nil {
		if apierrors.IsNotFound(err) {
			r.waiting.set(req.NamespacedName, false)
		}
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	// The predicate admits only execution namespaces, so there is a cluster.
	clusterName := clusterOf(work)
	log = log.WithValues("cluster", clusterName)
	ctx = logr.NewContext(ctx, log)
	cluster := &clusterv1alpha1.Cluster{}
	err := r.Client.Get(ctx, types.NamespacedName{Name: clusterName}, cluster)
	if err != nil && !apierrors.IsNotFound(err) {
		return reconcile.Result{}, err
	}
	if apierrors.IsNotFound(err) {
		cluster = nil
	}
	if !r.serves(clusterName, cluster) {
		return reconcile.Result{}, nil
	}
	if !r.limiter.acquire(clusterName) {
		return reconcile.Result{RequeueAfter: busyRequeue}, nil
	}
	defer r.limiter.release(clusterName)

	if !work.DeletionTimestamp.IsZero() {
		return r.finalize(ctx, work, cluster)
	}
	if !controllerutil.ContainsFinalizer(work, workv1alpha1.FinalizerWork) {
		orig := work.DeepCopy()
		controllerutil.AddFinalizer(work, workv1alpha1.FinalizerWork)
		if err := r.Client.Patch(ctx, work, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{})); err != nil {
			return reconcile.Result{}, err
		}
	}
	switch {
	case cluster == nil:
		return reconcile.Result{}, r.setCondition(ctx, work, metav1.ConditionFalse, ReasonClusterNotFound, fmt.Sprintf("cluster %q does not exist", clusterName))
	case !cluster.DeletionTimestamp.IsZero():
		return reconcile.Result{}, nil // its Works are being removed
	case work.Spec.SuspendDispatching:
		log.V(1).Info("dispatching suspended")
		return reconcile.Result{}, r.markSuspended(ctx, work)
	case identityMismatch(cluster):
		// The Cluster's recovery event requeues the Work.
		ready := meta.FindStatusCondition(cluster.Status.Conditions, clusterv1alpha1.ClusterConditionReady)
		return reconcile.Result{}, r.setCondition(ctx, work, metav1.ConditionFalse, ReasonClusterIdentityMismatch, ready.Message)
	case markedUnreachable(cluster):
		// The Cluster's recovery event requeues the Work; the recheck only
		// covers a missed event.
		msg := fmt.Sprintf("cluster %q is unreachable; the Work is applied when it is back", clusterName)
		return reconcile.Result{RequeueAfter: waitForClusterRecheck}, r.setCondition(ctx, work, metav1.ConditionFalse, ReasonClusterUnreachable, msg)
	}
	return r.apply(ctx, work, cluster)
}

// serves reports whether this controller applies the Works of the cluster:
// an agent those of its own cluster only; the hub those of every cluster
// but Pull ones, whose agents apply them. A cluster that no longer exists
// has no agent left: the hub releases its deleted Works.
func (r *Reconciler) serves(name string, cluster *clusterv1alpha1.Cluster) bool {
	if r.pullCluster != "" {
		return name == r.pullCluster && cluster != nil
	}
	return cluster == nil || cluster.Spec.SyncMode != clusterv1alpha1.Pull
}

// clusterOf is the Work's target cluster: its cluster label, or else the
// cluster its execution namespace belongs to.
func clusterOf(work *workv1alpha1.Work) string {
	if c := work.Labels[workv1alpha1.LabelCluster]; c != "" {
		return c
	}
	c, _ := names.ClusterOfExecutionNamespace(work.Namespace)
	return c
}

// markedUnreachable reports whether the cluster status controller found
// the member unreachable; before any probe the member is tried.
func markedUnreachable(c *clusterv1alpha1.Cluster) bool {
	ready := meta.FindStatusCondition(c.Status.Conditions, clusterv1alpha1.ClusterConditionReady)
	return ready != nil && ready.Status == metav1.ConditionUnknown
}

// identityMismatch reports whether the cluster status controller found that
// the member answering is not the cluster that was joined: its objects are
// not Shepherd's to create or delete.
func identityMismatch(c *clusterv1alpha1.Cluster) bool {
	ready := meta.FindStatusCondition(c.Status.Conditions, clusterv1alpha1.ClusterConditionReady)
	return ready != nil && ready.Status != metav1.ConditionTrue &&
		(ready.Reason == clusterv1alpha1.ReasonIdentityMismatch || ready.Reason == clusterv1alpha1.ReasonIdentityUnverified)
}

// clientsFor returns the member's clients unless its breaker is open.
func (r *Reconciler) clientsFor(ctx context.Context, cluster *clusterv1alpha1.Cluster) (*clusterclient.Clients, error) {
	if err := r.breaker.check(cluster.Name); err != nil {
		return nil, err
	}
	return r.clients.ForCluster(ctx, cluster)
}

// finalize deletes the Work's objects from the member (unless the Work
// preserves them) and then releases the Work. A Cluster that no longer
// exists leaves nothing to clean up that the hub could reach.
func (r *Reconciler) finalize(ctx context.Context, work *workv1alpha1.Work, cluster *clusterv1alpha1.Cluster) (reconcile.Result, error) {
	if !controllerutil.ContainsFinalizer(work, workv1alpha1.FinalizerWork) {
		return reconcile.Result{}, nil
	}
	if cluster != nil {
		if markedUnreachable(cluster) || identityMismatch(cluster) {
			return reconcile.Result{RequeueAfter: waitForClusterRecheck}, nil
		}
		if err := r.deleteAll(ctx, work, cluster); err != nil {
			verb := "Deleting"
			if work.Spec.PreserveResourcesOnDeletion {
				verb = "Releasing"
			}
			r.Recorder.Eventf(work, nil, corev1.EventTypeWarning, "DeleteFailed", "Delete", "%s the Work's objects in cluster %s: %v", verb, cluster.Name, err)
			return reconcile.Result{}, err
		}
	}
	orig := work.DeepCopy()
	controllerutil.RemoveFinalizer(work, workv1alpha1.FinalizerWork)
	if err := r.Client.Patch(ctx, work, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{})); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	logr.FromContextOrDiscard(ctx).Info("released deleted Work", "work", client.ObjectKeyFromObject(work), "preserved", work.Spec.PreserveResourcesOnDeletion || cluster == nil)
	return reconcile.Result{}, nil
}

// deleteAll deletes every object the Work applied or would apply: those of
// its status identifiers and of its current manifests. A Work that
// preserves resources releases them instead (see releaseObject). Either
// way only objects whose annotation names the Work are touched.
func (r *Reconciler) deleteAll(ctx context.Context, work *workv1alpha1.Work, cluster *clusterv1alpha1.Cluster) error {
	clients, err := r.clientsFor(ctx, cluster)
	if err != nil {
		return err
	}
	ids := make([]workv1alpha1.ResourceIdentifier, 0, len(work.Status.ManifestStatuses))
	for _, ms := range work.Status.ManifestStatuses {
		ids = append(ids, ms.Identifier)
	}
	for _, mf := range decodeManifests(work) {
		if mf.err == nil {
			ids = append(ids, mf.id)
		}
	}
	if r.fence != nil {
		if err := r.fence(); err != nil {
			return err
		}
	}
	key := workKey(work)
	var errs []error
	for _, id := range ids {
		err := removeObject(ctx, clients, key, id, work.Spec.PreserveResourcesOnDeletion)
		if clusterclient.IsUnreachable(err) {
			r.breaker.trip(cluster.Name, err)
			return err
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", describe(id), err))
		}
	}
	return errors.Join(errs...)
}

func workKey(w *workv1alpha1.Work) string { return w.Namespace + "/" + w.Name }

// worksOfCluster maps a Cluster event to the Works in its execution namespace.
func (r *Reconciler) worksOfCluster(ctx context.Context, o client.Object) []reconcile.Request {
	list := &workv1alpha1.WorkList{}
	if err := r.Client.List(ctx, list, client.InNamespace(names.ExecutionNamespace(o.GetName()))); err != nil {
		logr.FromContextOrDiscard(ctx).Error(err, "listing the Works of a cluster", "cluster", o.GetName())
		return nil
	}
	reqs := make([]reconcile.Request, 0, len(list.Items))
	for _, w := range list.Items {
		reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&w)})
	}
	return reqs
}

// worksOfSecret maps a change of a credentials Secret to the Works of the
// Clusters whose secretRef names it: new credentials may reach the member
// (again), so their Works are applied at once.
func (r *Reconciler) worksOfSecret(ctx context.Context, o client.Object) []reconcile.Request {
	clusters := &clusterv1alpha1.ClusterList{}
	if err := r.Client.List(ctx, clusters); err != nil {
		logr.FromContextOrDiscard(ctx).Error(err, "listing Clusters")
		return nil
	}
	var reqs []reconcile.Request
	for i := range clusters.Items {
		c := &clusters.Items[i]
		if ref := c.Spec.SecretRef; ref != nil && ref.Namespace == o.GetNamespace() && ref.Name == o.GetName() {
			reqs = append(reqs, r.worksOfCluster(ctx, c)...)
		}
	}
	return reqs
}

// secretDataChanged passes updates of a Secret's data only.
func secretDataChanged() predicate.Predicate {
	return predicate.Funcs{
		CreateFunc:  func(event.CreateEvent) bool { return false },
		DeleteFunc:  func(event.DeleteEvent) bool { return false },
		GenericFunc: func(event.GenericEvent) bool { return false },
		UpdateFunc: func(e event.UpdateEvent) bool {
			o, ok1 := e.ObjectOld.(*corev1.Secret)
			n, ok2 := e.ObjectNew.(*corev1.Secret)
			return ok1 && ok2 && !equality.Semantic.DeepEqual(o.Data, n.Data)
		},
	}
}

// readinessChanged passes Cluster creations, deletions and updates that
// change the Ready condition's status or reason, start the deletion, or
// change how the member is reached (endpoint, credentials, identity): the
// Works are then applied again at once, to the member as it is now.
func readinessChanged() predicate.Predicate {
	status := func(o client.Object) metav1.ConditionStatus {
		c, ok := o.(*clusterv1alpha1.Cluster)
		if !ok {
			return ""
		}
		if ready := meta.FindStatusCondition(c.Status.Conditions, clusterv1alpha1.ClusterConditionReady); ready != nil {
			return ready.Status + metav1.ConditionStatus("/"+ready.Reason)
		}
		return ""
	}
	reach := func(o client.Object) string {
		c, ok := o.(*clusterv1alpha1.Cluster)
		if !ok {
			return ""
		}
		ref := ""
		if c.Spec.SecretRef != nil {
			ref = c.Spec.SecretRef.Namespace + "/" + c.Spec.SecretRef.Name
		}
		return fmt.Sprintf("%s|%s|%v|%s", c.Spec.APIEndpoint, ref, c.Spec.InsecureSkipTLSVerification, c.Spec.ID)
	}
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		return status(e.ObjectOld) != status(e.ObjectNew) || reach(e.ObjectOld) != reach(e.ObjectNew) ||
			e.ObjectOld.GetDeletionTimestamp().IsZero() != e.ObjectNew.GetDeletionTimestamp().IsZero()
	}}
}
