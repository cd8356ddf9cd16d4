package scheduling

import (
	"context"

	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
)

// The scheduler's queue is controller-runtime's priority queue: a binding
// is queued with its spec.schedulePriority (0 without one), so when the
// scheduler has a backlog, higher priorities are scheduled first, and a
// high-priority binding waits at most for the cycles already running,
// however many low-priority ones are queued. Equal priorities keep their
// order of arrival. A binding queued twice keeps the higher priority.

// enqueue adds b to q with its scheduling priority.
func enqueue(q workqueue.TypedRateLimitingInterface[reconcile.Request], b client.Object) {
	req := reconcile.Request{NamespacedName: client.ObjectKeyFromObject(b)}
	pq, ok := q.(priorityqueue.PriorityQueue[reconcile.Request])
	bo, isBinding := b.(workv1alpha1.BindingObject)
	if !ok || !isBinding {
		q.Add(req)
		return
	}
	p := int(workv1alpha1.PriorityOf(bo.GetBindingSpec()))
	pq.AddWithOpts(priorityqueue.AddOpts{Priority: &p}, req)
}

// bindingHandler queues bindings on create, update and generic events with
// their priority (deletes are nothing to schedule). handler.Funcs hands a
// priority queue wrapped to lower the priority of unchanged objects on
// Add; enqueue passes the priority explicitly, which the wrapper keeps.
func bindingHandler() handler.EventHandler {
	type queue = workqueue.TypedRateLimitingInterface[reconcile.Request]
	return handler.Funcs{
		CreateFunc:  func(_ context.Context, e event.CreateEvent, q queue) { enqueue(q, e.Object) },
		UpdateFunc:  func(_ context.Context, e event.UpdateEvent, q queue) { enqueue(q, e.ObjectNew) },
		GenericFunc: func(_ context.Context, e event.GenericEvent, q queue) { enqueue(q, e.Object) },
	}
}
