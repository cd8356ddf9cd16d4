package dependencies

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/controllerdeps"
	"github.com/shepherd-io/shepherd/pkg/controllers/internal/index"
)

// Setup adds both controllers to d.Manager; d.Interpreter lists a
// template's dependencies and the kinds they may name.
func Setup(d controllerdeps.Deps) error {
	d = d.WithDefaults()
	mgr := d.Manager
	if err := index.SetupBindingsByDependent(d); err != nil {
		return err
	}
	deps := &watcher{cache: mgr.GetCache(), watched: map[schema.GroupVersionKind]bool{}}
	r := &Reconciler{client: mgr.GetClient(), recorder: d.Recorder(ControllerName), in: d.Interpreter, deps: deps}
	dependents := builder.WithPredicates(predicate.Funcs{
		// Targets, the template version and propagateDeps are in the
		// spec; deletions must release what the binding required.
		UpdateFunc: func(e event.UpdateEvent) bool {
			return e.ObjectOld.GetGeneration() != e.ObjectNew.GetGeneration() ||
				(e.ObjectOld.GetDeletionTimestamp() == nil) != (e.ObjectNew.GetDeletionTimestamp() == nil)
		},
	})
	if err := builder.ControllerManagedBy(mgr).
		Named(ControllerName).
		For(&workv1alpha1.ResourceBinding{}, dependents).
		WithOptions(d.ControllerOptions(0)).
		Complete(r); err != nil {
		return err
	}
	c, err := builder.ControllerManagedBy(mgr).Named(ControllerName+"-attached").
		For(&workv1alpha1.ResourceBinding{}, builder.WithPredicates(predicate.NewPredicateFuncs(func(obj client.Object) bool {
			return obj.GetLabels()[workv1alpha1.LabelAttached] == "true"
		}))).
		WithOptions(d.ControllerOptions(0)).
		Build(&AttachedReconciler{client: mgr.GetClient(), deps: deps})
	if err != nil {
		return err
	}
	deps.controller = c
	// The kinds the interpreter names up front are watched from the start;
	// others (a customization's expression may name any kind) as the
	// first dependency of each is seen.
	for _, gvk := range d.Interpreter.DependencyKinds() {
		if err := deps.watch(gvk); err != nil {
			return err
		}
	}
	return nil
}
