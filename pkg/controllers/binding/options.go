package binding

import (
	"context"
	"maps"
	"strings"
	"time"

	"github.com/shepherd-io/shepherd/pkg/conflicts"

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/controllerdeps"
	"github.com/shepherd-io/shepherd/pkg/controllers/internal/bindingutil"
	"github.com/shepherd-io/shepherd/pkg/controllers/internal/index"
	"github.com/shepherd-io/shepherd/pkg/names"
)

// Options configure the binding controllers.
type Options struct {
	// Workers is how many bindings of each kind are reconciled in parallel
	// (default 16).
	Workers int
	// CoalesceWindow is how long a change of a Work waits before its
	// binding is reconciled (default 1 s; negative: at once), so that the
	// Works of one binding, applied in several members within the window,
	// move its targets to Bound and its FullyApplied condition to True in
	// one write each instead of one per Work. The binding's own changes
	// are handled at once.
	CoalesceWindow time.Duration
	// WorkFinalizer creates Works with the execution controller's finalizer
	// (workv1alpha1.FinalizerWork) already on them, saving that controller
	// a write per Work. Set it only where the execution controller runs
	// too (the controller manager does): nothing else removes the
	// finalizer, so without it a Work could never be deleted.
	WorkFinalizer bool
}

func (o Options) withDefaults() Options {
	if o.Workers <= 0 {
		o.Workers = 16
	}
	switch {
	case o.CoalesceWindow == 0:
		o.CoalesceWindow = time.Second
	case o.CoalesceWindow < 0:
		o.CoalesceWindow = 0
	}
	return o
}

// ControllerName names the binding controller in the registry and its
// events.
const ControllerName = "binding"

// newReconciler builds the reconciler of one binding kind; opts are
// already defaulted (Setup applies withDefaults once: applying it twice
// would turn a negative CoalesceWindow, "none", into the default).
func newReconciler[T workv1alpha1.BindingObject](d controllerdeps.Deps, kind bindingutil.Kind[T], opts Options) *Reconciler[T] {
	return &Reconciler[T]{
		in:        d.Interpreter,
		client:    d.Client(),
		reader:    d.Manager.GetAPIReader(),
		revisions: &revisionCache{},
		now:       time.Now,
		cache:     d.Manager.GetCache(),
		kind:      kind,
		recorder:  d.Recorder(ControllerName),
		conflicts: conflicts.NewRequeue(),
		opts:      opts,

		failedRenders: &renderFailures{},
	}
}

// bindingOfWork returns the binding of the given kind a Work belongs to.
func bindingOfWork(kind string, w *workv1alpha1.Work) (names.BindingRef, bool) {
	ref, ok := bindingutil.BindingOf(w)
	return ref, ok && ref.Kind == kind
}

// setup registers the controller ("binding-<kind>"), watching the kind's
// bindings and their Works, and the Work index it reads.
func (r *Reconciler[T]) setup(d controllerdeps.Deps) error {
	mgr := d.Manager
	kind := r.kind.Name
	if err := index.SetupWorksByBinding(d); err != nil {
		return err
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named("binding-"+strings.ToLower(kind)).
		For(r.kind.New(), builder.WithPredicates(bindingPredicate())).
		WatchesRawSource(source.Kind(mgr.GetCache(), &workv1alpha1.Work{},
			bindingutil.Coalesced(r.opts.CoalesceWindow, func(w *workv1alpha1.Work) (reconcile.Request, bool) {
				ref, ok := bindingOfWork(kind, w)
				return reconcile.Request{NamespacedName: client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}}, ok
			}), workChanged())).
		Watches(&policyv1alpha1.OverridePolicy{}, handler.EnqueueRequestsFromMapFunc(r.bindingsOfOverride), builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(&policyv1alpha1.ClusterOverridePolicy{}, handler.EnqueueRequestsFromMapFunc(r.bindingsOfOverride), builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(&corev1.Namespace{}, handler.EnqueueRequestsFromMapFunc(r.bindingsOfNamespace), builder.WithPredicates(podSecurityChanged())).
		WithOptions(d.ControllerOptions(r.opts.Workers)).
		Complete(r)
}

// bindingsOfOverride enqueues the bindings an override policy may concern:
// those of its namespace, or all of them for a ClusterOverridePolicy. Each
// re-renders its Works and writes only those whose manifest changed.
func (r *Reconciler[T]) bindingsOfOverride(ctx context.Context, obj client.Object) []reconcile.Request {
	return r.bindingsIn(ctx, obj.GetNamespace())
}

// bindingsIn enqueues the bindings of namespace ns (every one for "").
func (r *Reconciler[T]) bindingsIn(ctx context.Context, ns string) []reconcile.Request {
	list := r.kind.NewList()
	var opts []client.ListOption
	if ns != "" {
		opts = append(opts, client.InNamespace(ns))
	}
	if err := r.client.List(ctx, list, opts...); err != nil {
		logf.FromContext(ctx).Error(err, "listing bindings", "namespace", ns)
		return nil
	}
	items := r.kind.Items(list)
	out := make([]reconcile.Request, 0, len(items))
	for _, b := range items {
		out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(b)})
	}
	return out
}

// workChanged passes Work events that can change what the controller
// does or reports: creation, deletion, a change of spec, labels or
// annotations (an edited Work is restored), a change of what observe
// reads (Applied, deletion) and of whether its copy is ready for a
// rollout (rolloutReady: health and rolled out). The
// work status controller's writes of member statuses, several per Work
// while a rollout goes on, do not wake it.
func workChanged() predicate.TypedPredicate[*workv1alpha1.Work] {
	return predicate.TypedFuncs[*workv1alpha1.Work]{
		UpdateFunc: func(e event.TypedUpdateEvent[*workv1alpha1.Work]) bool {
			o, n := e.ObjectOld, e.ObjectNew
			return o.Generation != n.Generation || observe(o) != observe(n) || rolloutReady(o) != rolloutReady(n) ||
				!maps.Equal(o.Labels, n.Labels) || !maps.Equal(o.Annotations, n.Annotations)
		},
	}
}

// bindingPredicate passes binding events that change what the controller
// acts on: the spec (the generation: targets, template version, placement)
// and the deletion. Status writes (its own FullyApplied included) and
// metadata changes (its own finalizer, the scheduler's hash annotation) do
// not wake it.
func bindingPredicate() predicate.Predicate {
	return predicate.Funcs{
		UpdateFunc: func(e event.UpdateEvent) bool {
			o, n := e.ObjectOld, e.ObjectNew
			return o.GetGeneration() != n.GetGeneration() || (o.GetDeletionTimestamp() == nil) != (n.GetDeletionTimestamp() == nil)
		},
	}
}
