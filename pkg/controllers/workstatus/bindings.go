package workstatus

import (
	"context"

	"github.com/shepherd-io/shepherd/pkg/conflicts"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/controllerdeps"
	"github.com/shepherd-io/shepherd/pkg/controllers/internal/bindingutil"
	"github.com/shepherd-io/shepherd/pkg/controllers/internal/index"
	"github.com/shepherd-io/shepherd/pkg/interpreter"
	"github.com/shepherd-io/shepherd/pkg/names"
)

// bindingPtr constrains T's pointer to a binding kind, so one reconciler
// serves ResourceBinding and ClusterResourceBinding.
type bindingPtr[T any] interface {
	*T
	workv1alpha1.BindingObject
}

// bindingReconciler aggregates the Works of one binding kind into the
// binding's status and the template's status.
type bindingReconciler[T any, PT bindingPtr[T]] struct {
	kind   string
	client client.Client
	// templates reads templates from the manager's shared informers (the
	// detector watches every propagated kind): the client would read an
	// unstructured object from the API server on every reconcile.
	templates client.Reader
	recorder  events.EventRecorder
	in        interpreter.Interpreter
	// conflicts turns a status write that lost the race with another
	// writer of the binding (the scheduler, the binding controller) into
	// a quiet, backed-off retry: a retried conflict is no error to log.
	conflicts *conflicts.Requeue
}

// setupBindingController registers the aggregation controller of one
// binding kind: the binding's own spec changes (at once), and any change
// of one of its Works (coalesced: the Works of a binding change together).
func setupBindingController[T any, PT bindingPtr[T]](d controllerdeps.Deps, kind string, rec events.EventRecorder, o Options) error {
	mgr := d.Manager
	r := &bindingReconciler[T, PT]{kind: kind, client: mgr.GetClient(), templates: mgr.GetCache(), recorder: rec, in: d.Interpreter, conflicts: conflicts.NewRequeue()}
	return builder.ControllerManagedBy(mgr).
		Named("binding-status-"+kind).
		For(PT(new(T)), builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		WatchesRawSource(source.Kind(mgr.GetCache(), &workv1alpha1.Work{}, bindingutil.Coalesced(o.CoalesceWindow, func(w *workv1alpha1.Work) (reconcile.Request, bool) {
			ref, ok := bindingutil.BindingOf(w)
			if !ok || ref.Kind != kind {
				return reconcile.Request{}, false
			}
			return reconcile.Request{NamespacedName: client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}}, true
		}))).
		WithOptions(d.ControllerOptions(o.Workers)).
		Complete(r)
}

func (r *bindingReconciler[T, PT]) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	res, err := r.reconcile(ctx, req)
	return r.conflicts.Result(req, res, err)
}

func (r *bindingReconciler[T, PT]) reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
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
	if err := r.client.List(ctx, works, client.MatchingFields{index.WorksByBinding: ref.String()}); err != nil {
		return reconcile.Result{}, err
	}
	spec, status := b.GetBindingSpec(), b.GetBindingStatus()
	items := aggregate(status.AggregatedStatus, works.Items, spec.Resource, metav1.Now())
	if !sameItems(status.AggregatedStatus, items) {
		orig := b.DeepCopyObject().(PT)
		prev := status.AggregatedStatus
		status.AggregatedStatus = items
		if err := r.client.Status().Patch(ctx, b, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{})); err != nil {
			// A conflict (another writer got there first, and its write
			// does not requeue us) is retried with back-off, quietly
			// (Reconcile).
			return reconcile.Result{}, err
		}
		statusWrites.WithLabelValues("binding").Inc()
		r.recordHealthChanges(b, prev, items)
	}
	var targets []string
	for _, t := range bindingutil.ActiveTargets(spec.Clusters) {
		targets = append(targets, t.Name)
	}
	wrote, err := reflectTemplate(ctx, r.in, r.templates, r.client, spec.Resource, items,
		func(gen int64) bool { return rolledOut(gen, targets, works.Items) })
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
// copy changed health after it had been Healthy once (settled). A copy's
// first rollout (none -> Unhealthy -> Healthy) is no news: the binding's
// aggregated status shows it, and a Warning for every new placement would
// drown the events that matter; what follows, a settled copy degrading
// or recovering, is what failover acts on and what an operator wants to
// see.
func (r *bindingReconciler[T, PT]) recordHealthChanges(b PT, prev, items []workv1alpha1.AggregatedStatusItem) {
	type state struct {
		health  policyv1alpha1.ResourceHealth
		settled bool
		drifted bool
	}
	was := make(map[string]state, len(prev))
	for _, p := range prev {
		was[p.ClusterName] = state{p.Health, p.Settled, p.Drifted}
	}
	for _, item := range items {
		before, seen := was[item.ClusterName]
		if item.Drifted && !before.drifted {
			// The copy was edited in the member: said on the binding too,
			// where its owners look (the Work's event has the detail).
			r.recorder.Eventf(b, nil, corev1.EventTypeWarning, "Drifted", "CollectStatus", "%s",
				bindingutil.Note("cluster "+item.ClusterName+": "+item.DriftMessage))
		}
		if !seen || !before.settled || before.health == item.Health {
			continue
		}
		typ := corev1.EventTypeNormal
		if item.Health == policyv1alpha1.ResourceUnhealthy {
			typ = corev1.EventTypeWarning
		}
		r.recorder.Eventf(b, nil, typ, "HealthChanged", "CollectStatus", "cluster %s: %s -> %s", item.ClusterName, before.health, item.Health)
	}
}
