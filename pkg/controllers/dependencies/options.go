package dependencies

import (
	"context"

	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/names"
)

const (
	// ControllerName names the controller of dependent bindings.
	ControllerName = "dependencies"
	// FieldManager owns spec.requiredBy and the attached bindings.
	FieldManager = "shepherd-dependencies"
	// LabelAttached marks the bindings this package creates.
	LabelAttached = "work.shepherd.io/attached"
	// indexRequiredBy indexes ResourceBindings by each dependent
	// ("<namespace>/<name>") in their spec.requiredBy.
	indexRequiredBy = "dependencies.shepherd.io/required-by"
)

// attachedOps counts attached bindings created and deleted.
var attachedOps = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "shepherd_dependencies_attached_bindings_total",
	Help: "Attached bindings of dependencies created and deleted, by operation.",
}, []string{"operation"})

func init() { metrics.Registry.MustRegister(attachedOps) }

// dependencyKinds are the kinds interpreter.GetDependencies returns; their
// objects are watched (metadata only) to keep attached bindings current.
var dependencyKinds = []string{"ConfigMap", "Secret", "ServiceAccount", "PersistentVolumeClaim"}

// Options configure the controllers (none yet).
type Options struct{}

// Setup adds both controllers to mgr.
func Setup(mgr manager.Manager, _ Options) error {
	err := mgr.GetFieldIndexer().IndexField(context.Background(), &workv1alpha1.ResourceBinding{}, indexRequiredBy, func(obj client.Object) []string {
		var out []string
		for _, s := range obj.(*workv1alpha1.ResourceBinding).Spec.RequiredBy {
			out = append(out, s.Namespace+"/"+s.Name)
		}
		return out
	})
	if err != nil {
		return err
	}
	r := &Reconciler{client: mgr.GetClient(), recorder: mgr.GetEventRecorder("shepherd-" + ControllerName)}
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
		Complete(r); err != nil {
		return err
	}
	a := builder.ControllerManagedBy(mgr).Named(ControllerName+"-attached").
		For(&workv1alpha1.ResourceBinding{}, builder.WithPredicates(predicate.NewPredicateFuncs(func(obj client.Object) bool {
			return obj.GetLabels()[LabelAttached] == "true"
		})))
	for _, kind := range dependencyKinds {
		m := &metav1.PartialObjectMetadata{}
		m.SetGroupVersionKind(schema.GroupVersionKind{Version: "v1", Kind: kind})
		a = a.WatchesMetadata(m, handler.EnqueueRequestsFromMapFunc(func(_ context.Context, obj client.Object) []reconcile.Request {
			return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: obj.GetNamespace(), Name: names.BindingName(kind, obj.GetName())}}}
		}))
	}
	return a.Complete(&AttachedReconciler{client: mgr.GetClient()})
}
