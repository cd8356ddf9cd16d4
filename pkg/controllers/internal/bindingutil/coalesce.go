package bindingutil

import (
	"context"
	"time"

	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// Coalesced is an event handler that enqueues the request of each event's
// object (mapFn; false drops the event) window after the event rather than
// at once. The work queue holds a waiting request once, at the earliest
// time it was asked for, so every event within the window of the first
// one ends in the same reconcile: a burst of status changes costs one
// write. A window of 0 enqueues at once.
func Coalesced[T any](window time.Duration, mapFn func(T) (reconcile.Request, bool)) handler.TypedEventHandler[T, reconcile.Request] {
	add := func(q workqueue.TypedRateLimitingInterface[reconcile.Request], obj T) {
		req, ok := mapFn(obj)
		switch {
		case !ok:
		case window <= 0:
			q.Add(req)
		default:
			q.AddAfter(req, window)
		}
	}
	type queue = workqueue.TypedRateLimitingInterface[reconcile.Request]
	return handler.TypedFuncs[T, reconcile.Request]{
		CreateFunc:  func(_ context.Context, e event.TypedCreateEvent[T], q queue) { add(q, e.Object) },
		UpdateFunc:  func(_ context.Context, e event.TypedUpdateEvent[T], q queue) { add(q, e.ObjectNew) },
		DeleteFunc:  func(_ context.Context, e event.TypedDeleteEvent[T], q queue) { add(q, e.Object) },
		GenericFunc: func(_ context.Context, e event.TypedGenericEvent[T], q queue) { add(q, e.Object) },
	}
}
