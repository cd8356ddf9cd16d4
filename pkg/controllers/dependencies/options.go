package dependencies

import (
	"context"
	"fmt"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/controllerdeps"
	"github.com/shepherd-io/shepherd/pkg/controllers/internal/index"
	"github.com/shepherd-io/shepherd/pkg/names"
)

const (
	// ControllerName names the controller of dependent bindings.
	ControllerName = "dependencies"
	// FieldManager owns spec.requiredBy and the attached bindings.
	FieldManager = "shepherd-dependencies"
)

// attachedOps counts attached bindings created and deleted.
var attachedOps = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "shepherd_dependencies_attached_bindings_total",
	Help: "Attached bindings of dependencies created and deleted, by operation.",
}, []string{"operation"})

func init() { metrics.Registry.MustRegister(attachedOps) }

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

// watcher watches (metadata only) the kinds of the dependencies seen, to
// keep attached bindings on their objects: an edit moves the binding's
// resource version, a deletion takes the binding with it.
type watcher struct {
	cache      cache.Cache
	controller controller.Controller
	mu         sync.Mutex
	watched    map[schema.GroupVersionKind]bool
}

// watch starts watching gvk's objects, once.
func (w *watcher) watch(gvk schema.GroupVersionKind) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.watched[gvk] {
		return nil
	}
	m := &metav1.PartialObjectMetadata{}
	m.SetGroupVersionKind(gvk)
	kind := gvk.Kind
	err := w.controller.Watch(source.Kind(w.cache, client.Object(m), handler.EnqueueRequestsFromMapFunc(func(_ context.Context, obj client.Object) []reconcile.Request {
		return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: obj.GetNamespace(), Name: names.BindingName(kind, obj.GetName())}}}
	})))
	if err != nil {
		return fmt.Errorf("watching %s, a kind dependencies name: %w", gvk, err)
	}
	w.watched[gvk] = true
	return nil
}
