package scheduling

import (
	"strings"
	"time"

	"github.com/shepherd-io/shepherd/pkg/conflicts"

	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/controllerdeps"
	"github.com/shepherd-io/shepherd/pkg/controllers/internal/bindingutil"
)

// Setup adds the scheduling controllers of both binding kinds
// ("scheduler-<kind>"), sharing one fleet snapshot.
func Setup(d controllerdeps.Deps, opts Options) error {
	d = d.WithDefaults()
	opts, err := opts.withProfile()
	if err != nil {
		return err
	}
	fleet := NewFleet(d.Client(), d.Interpreter)
	if err := newReconciler(d, bindingutil.ResourceBindings(), fleet, opts).setup(d); err != nil {
		return err
	}
	return newReconciler(d, bindingutil.ClusterResourceBindings(), fleet, opts).setup(d)
}

func newReconciler[T workv1alpha1.BindingObject](d controllerdeps.Deps, kind bindingutil.Kind[T], fleet *Fleet, opts Options) *Reconciler[T] {
	opts = opts.withDefaults()
	return &Reconciler[T]{
		client:    d.Client(),
		apiReader: d.Manager.GetAPIReader(),
		kind:      kind,
		fleet:     fleet,
		recorder:  d.Recorder(ControllerName),
		backoff:   workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](opts.RetryBaseDelay, opts.RetryMaxDelay),
		conflicts: conflicts.NewRequeue(),
		opts:      opts,
		now:       time.Now,
	}
}

// setup registers the controller ("scheduler-<kind>") and the cache
// indexes it needs.
func (r *Reconciler[T]) setup(d controllerdeps.Deps) error {
	mgr := d.Manager
	if err := setupIndexes(d, r.kind); err != nil {
		return err
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named("scheduler-"+strings.ToLower(r.kind.Name)).
		Watches(r.kind.New(), bindingHandler(), builder.WithPredicates(bindingPredicate())).
		WatchesRawSource(source.Kind(mgr.GetCache(), &clusterv1alpha1.Cluster{}, r.clusterHandler())).
		WatchesRawSource(source.Kind(mgr.GetCache(), r.kind.New(), r.ledgerHandler())).
		WithOptions(d.ControllerOptions(r.opts.Workers)).
		Complete(r)
}
