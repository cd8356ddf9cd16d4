package detector

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/event"
)

// Options configure the detector.
type Options struct {
	// Workers is how many templates are reconciled in parallel (default 16).
	Workers int
	// UnknownKindRetry is how long to wait before resolving again a kind a
	// policy names but the hub does not serve yet (default 30 s).
	UnknownKindRetry time.Duration
}

func (o Options) withDefaults() Options {
	if o.Workers <= 0 {
		o.Workers = 16
	}
	if o.UnknownKindRetry <= 0 {
		o.UnknownKindRetry = 30 * time.Second
	}
	return o
}

// ControllerName names the detector in the registry, logs and events.
const ControllerName = "detector"

// templatesOf sends every watched template of gk to ch, from the cache.
// Called from another controller's worker: it blocks no longer than the
// detector needs to drain the channel, and not at all once the manager
// stopped.
func (r *Reconciler) templatesOf(gk schema.GroupKind, ch chan<- event.TypedGenericEvent[*unstructured.Unstructured], stopped <-chan struct{}) {
	gvk, ok := r.kinds.lookup(gk)
	if !ok {
		return // not watched: no template of it was bound yet
	}
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	if err := r.cache.List(context.Background(), list); err != nil {
		return
	}
	for i := range list.Items {
		select {
		case ch <- event.TypedGenericEvent[*unstructured.Unstructured]{Object: &list.Items[i]}:
		case <-stopped:
			return
		}
	}
}
