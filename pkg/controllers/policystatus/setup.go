package policystatus

import (
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/controllerdeps"
	"github.com/shepherd-io/shepherd/pkg/controllers/internal/bindingutil"
)

// Setup adds the policy status controller to mgr.
func Setup(d controllerdeps.Deps) error {
	d = d.WithDefaults()
	mgr := d.Manager
	if err := setupIndexes(d, bindingutil.ResourceBindings()); err != nil {
		return err
	}
	if err := setupIndexes(d, bindingutil.ClusterResourceBindings()); err != nil {
		return err
	}
	r := &Reconciler{client: mgr.GetClient(), recorder: d.Recorder(ControllerName)}
	// The status controller's own writes do not change the generation.
	specOnly := builder.WithPredicates(predicate.GenerationChangedPredicate{})
	createDelete := builder.WithPredicates(predicate.Funcs{UpdateFunc: func(event.UpdateEvent) bool { return false }})
	// A binding's status and targets change many times per workload; the
	// policy status reads none of them.
	factsOnly := builder.WithPredicates(predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool { return factsChanged(e.ObjectOld, e.ObjectNew) }})
	return builder.ControllerManagedBy(mgr).
		Named(ControllerName).
		For(&policyv1alpha1.PropagationPolicy{}, specOnly).
		Watches(&policyv1alpha1.ClusterPropagationPolicy{}, &handler.EnqueueRequestForObject{}, specOnly).
		Watches(&workv1alpha1.ResourceBinding{}, handler.EnqueueRequestsFromMapFunc(policiesOfBinding), factsOnly).
		Watches(&workv1alpha1.ClusterResourceBinding{}, handler.EnqueueRequestsFromMapFunc(policiesOfBinding), factsOnly).
		Watches(&clusterv1alpha1.Cluster{}, handler.EnqueueRequestsFromMapFunc(r.allPolicies), createDelete).
		WithOptions(d.ControllerOptions(0)).
		Complete(r)
}
