package dependencies

import (
	"context"
	"fmt"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

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
