package workstatus

import (
	"context"
	"fmt"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/names"
)

// workBindingIndex indexes Works by their binding ("<kind>/<ns>/<name>"),
// so a binding finds its Works without listing every Work.
const workBindingIndex = "shepherd.work.binding"

func indexWorkBinding(o client.Object) []string {
	if ref, ok := bindingOf(o.(*workv1alpha1.Work)); ok {
		return []string{ref.String()}
	}
	return nil
}

// bindingPtr constrains T's pointer to a binding kind, so one reconciler
// serves ResourceBinding and ClusterResourceBinding.
type bindingPtr[T any] interface {
	*T
	workv1alpha1.BindingObject
}

// bindingReconciler aggregates the Works of one binding kind into the
// binding's status and the template's status.
type bindingReconciler[T any, PT bindingPtr[T]] struct {
	kind     string
	client   client.Client
	recorder events.EventRecorder
}

// setupBindingController registers the aggregation controller of one
// binding kind: the binding's own spec changes, and any change of one of
// its Works.
func setupBindingController[T any, PT bindingPtr[T]](mgr manager.Manager, kind string, rec events.EventRecorder, workers int) error {
	r := &bindingReconciler[T, PT]{kind: kind, client: mgr.GetClient(), recorder: rec}
	ofKind := predicate.NewPredicateFuncs(func(o client.Object) bool {
		ref, ok := bindingOf(o.(*workv1alpha1.Work))
		return ok && ref.Kind == kind
	})
	return builder.ControllerManagedBy(mgr).
		Named("binding-status-"+kind).
		For(PT(new(T)), builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(&workv1alpha1.Work{}, handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
			ref, _ := bindingOf(o.(*workv1alpha1.Work))
			return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}}}
		}), builder.WithPredicates(ofKind)).
		WithOptions(controller.Options{MaxConcurrentReconciles: workers}).
		Complete(r)
}

func (r *bindingReconciler[T, PT]) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	log := logr.FromContextOrDiscard(ctx)
	b := PT(new(T))
	if err := r.client.Get(ctx, req.NamespacedName, b); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if !b.GetDeletionTimestamp().IsZero() {
		return reconcile.Result{}, nil
	}
	ref := names.BindingRef{Kind: r.kind, Namespace: b.GetNamespace(), Name: b.GetName()}
	works := &workv1alpha1.WorkList{}
	if err := r.client.List(ctx, works, client.MatchingFields{workBindingIndex: ref.String()}); err != nil {
		return reconcile.Result{}, err
	}
	spec, status := b.GetBindingSpec(), b.GetBindingStatus()
	items := aggregate(status.AggregatedStatus, works.Items, spec.Resource, metav1.Now())
	if !sameItems(status.AggregatedStatus, items) {
		orig := b.DeepCopyObject().(PT)
		prev := status.AggregatedStatus
		status.AggregatedStatus = items
		if err := r.client.Status().Patch(ctx, b, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{})); err != nil {
			if apierrors.IsConflict(err) {
				// Another writer (the scheduler) got there first; its
				// write does not requeue us, so retry with back-off.
				return reconcile.Result{}, fmt.Errorf("binding %s changed meanwhile: %w", ref, err)
			}
			return reconcile.Result{}, err
		}
		statusWrites.WithLabelValues("binding").Inc()
		r.recordHealthChanges(b, prev, items)
	}
	wrote, err := reflectTemplate(ctx, r.client, spec.Resource, items)
	if err != nil {
		return reconcile.Result{}, err
	}
	if wrote {
		statusWrites.WithLabelValues("template").Inc()
		log.V(1).Info("updated template status", "template", spec.Resource.Kind+" "+spec.Resource.Name)
	}
	return reconcile.Result{}, nil
}

// recordHealthChanges emits an event on the binding for each cluster whose
// copy changed health.
func (r *bindingReconciler[T, PT]) recordHealthChanges(b PT, prev, items []workv1alpha1.AggregatedStatusItem) {
	was := map[string]policyv1alpha1.ResourceHealth{}
	for _, p := range prev {
		was[p.ClusterName] = p.Health
	}
	for _, item := range items {
		before, seen := was[item.ClusterName]
		if seen && before == item.Health {
			continue
		}
		typ := corev1.EventTypeNormal
		if item.Health == policyv1alpha1.ResourceUnhealthy {
			typ = corev1.EventTypeWarning
		}
		if !seen {
			before = "none"
		}
		r.recorder.Eventf(b, nil, typ, "HealthChanged", "CollectStatus", "cluster %s: %s -> %s", item.ClusterName, before, item.Health)
	}
}
