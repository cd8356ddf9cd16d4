package execution

import (
	"time"

	"github.com/shepherd-io/shepherd/pkg/conflicts"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/controllerdeps"
	"github.com/shepherd-io/shepherd/pkg/names"
)

// Setup registers the controller: Works in execution namespaces (spec
// changes and deletions, and status writes of the work status controller
// saying that a member object's generation moved past the one Shepherd
// applied: someone edited it, see memberEdited; its own status writes do
// not retrigger it), the Works of a Cluster whose readiness changes or
// which goes away, and the Works waiting for a kind once the Cluster's
// served APIs change.
func Setup(d controllerdeps.Deps, opts Options) error {
	return newReconciler(d, opts).setup(d)
}

func newReconciler(d controllerdeps.Deps, opts Options) *Reconciler {
	d = d.WithDefaults()
	r := &Reconciler{
		Client:        d.Client(),
		Recorder:      d.Recorder(ControllerName),
		Options:       opts.withDefaults(),
		clients:       d.Clients,
		interpreter:   d.Interpreter,
		fence:         d.Fence,
		pullCluster:   d.PullCluster,
		hubNamespaces: d.Client(),
		clock:         d.Clock,
		conflicts:     conflicts.NewRequeue(),
	}
	if d.Agent() {
		r.hubNamespaces = d.Manager.GetAPIReader()
	}
	r.breaker = newBreaker(r.Options.UnreachableBackoff, time.Now)
	r.limiter = newLimiter(r.Options.MaxInFlightPerCluster)
	return r
}

func (r *Reconciler) setup(d controllerdeps.Deps) error {
	mgr := d.Manager
	inExecutionNamespace := predicate.NewPredicateFuncs(func(o client.Object) bool { return names.IsExecutionNamespace(o.GetNamespace()) })
	deleting := predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool { return !e.ObjectNew.GetDeletionTimestamp().IsZero() }}
	b := builder.ControllerManagedBy(mgr).
		Named(ControllerName).
		For(&workv1alpha1.Work{}, builder.WithPredicates(inExecutionNamespace, predicate.Or[client.Object](predicate.GenerationChangedPredicate{}, deleting, memberEdited()))).
		Watches(&clusterv1alpha1.Cluster{}, handler.EnqueueRequestsFromMapFunc(r.worksOfCluster), builder.WithPredicates(readinessChanged())).
		// Works waiting for a kind their member did not serve (see
		// kindWaiters).
		Watches(&clusterv1alpha1.Cluster{}, handler.EnqueueRequestsFromMapFunc(r.worksAwaitingKinds), builder.WithPredicates(apisChanged()))
	if r.pullCluster == "" {
		// An agent reaches its member with its own credentials.
		b = b.Watches(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(r.worksOfSecret), builder.WithPredicates(secretDataChanged()))
	}
	// A member's failures are retried from RetryBaseDelay (1 s), not the
	// 5 ms of other controllers: each retry dials the member.
	copts := d.ControllerOptions(r.Options.Workers)
	copts.RateLimiter = workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](r.Options.RetryBaseDelay, r.Options.RetryMaxDelay)
	return b.WithOptions(copts).Complete(r)
}
