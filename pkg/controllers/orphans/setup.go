package orphans

import (
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/controllerdeps"
)

// Setup registers the sweep: one reconcile per Cluster, requeued every
// Options.Period. On the hub it sweeps Push members; in a Pull cluster's
// agent, its own member.
func Setup(d controllerdeps.Deps, opts Options) error {
	d = d.WithDefaults()
	r := newReconciler(d, opts.withDefaults())
	return ctrl.NewControllerManagedBy(d.Manager).
		Named(ControllerName).
		For(&clusterv1alpha1.Cluster{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		WithOptions(d.ControllerOptions(1)).
		Complete(r)
}
