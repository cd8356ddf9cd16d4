// Package cel turns HealthInterpreter objects into health interpreters: a
// CEL expression over the member object observedObj (package health/expr),
// compiled once per generation and registered as an override in a
// health.Registry, so that it replaces the built-in interpreter of its kind
// while it exists. It also serves the validating webhook of the hub's CEL
// objects (HealthInterpreters and ResourceInterpreterCustomizations) and
// of cluster credentials.
//
// An expression that does not compile is reported on the object
// (Compiled=False with the compiler's error, a Warning event), and the
// kind keeps its previous interpreter (built-in, or none: Unknown). Two
// HealthInterpreters for one kind are resolved by name, the first in
// lexical order winning; the other is marked Active=False (Superseded).
package cel

import (
	"context"
	"slices"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	configv1alpha1 "github.com/shepherd-io/shepherd/api/config/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/health"
	"github.com/shepherd-io/shepherd/pkg/health/expr"
)

// ControllerName names the controller in logs, metrics and events.
const ControllerName = "health-interpreter"

// Event reasons.
const (
	EventCompileError = "CompileError"
	EventActivated    = "Activated"
)

// everything is the single request the controller works on: which
// interpreter wins a kind depends on all HealthInterpreters, so each event
// recomputes the whole (small) set rather than one object.
var everything = reconcile.Request{NamespacedName: client.ObjectKey{Name: "all"}}

// compiled caches an object's program by generation: compiling is the
// costly part and the spec changes rarely.
type compiled struct {
	generation int64
	interp     *expr.Interpreter
	err        error
}

// Reconciler keeps Registry's overrides equal to the active
// HealthInterpreters and reports on each object whether it compiled and
// is in use. Run one per process: the Registry is in memory.
type Reconciler struct {
	Registry *health.Registry
	// ReadOnly applies the objects without writing their status: the
	// agent of a Pull cluster judges health with them, and the hub's
	// controller manager reports on them.
	ReadOnly bool

	client   client.Client
	recorder events.EventRecorder
	cache    map[string]compiled
	applied  map[schema.GroupVersionKind]expr.InUse
}

// SetupWithManager registers the controller.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	r.client = mgr.GetClient()
	r.recorder = mgr.GetEventRecorder(ControllerName)
	r.cache = map[string]compiled{}
	r.applied = map[schema.GroupVersionKind]expr.InUse{}
	return ctrl.NewControllerManagedBy(mgr).
		Named(ControllerName).
		Watches(&configv1alpha1.HealthInterpreter{}, handler.EnqueueRequestsFromMapFunc(func(context.Context, client.Object) []reconcile.Request {
			return []reconcile.Request{everything}
		})).
		Complete(r)
}

// Reconcile recomputes every kind's interpreter (one worker, so the maps
// need no lock).
func (r *Reconciler) Reconcile(ctx context.Context, _ reconcile.Request) (reconcile.Result, error) {
	log := logr.FromContextOrDiscard(ctx)
	list := &configv1alpha1.HealthInterpreterList{}
	if err := r.client.List(ctx, list); err != nil {
		return reconcile.Result{}, err
	}
	cands := make([]expr.Candidate, len(list.Items))
	progs := make([]compiled, len(list.Items))
	for i := range list.Items {
		hi := &list.Items[i]
		progs[i] = r.compile(hi)
		cands[i] = expr.Candidate{Name: hi.Name, Generation: hi.Generation, Kind: hi.Spec.Target.GroupVersionKind(),
			Compiled: progs[i].err == nil, Deleting: hi.DeletionTimestamp != nil}
	}
	e := expr.Elect(expr.Words{Object: "HealthInterpreter", NotCompiled: "the expression does not compile", Serves: "judges the health of"},
		cands, r.applied)
	var firstErr error
	for i := range list.Items {
		hi, v := &list.Items[i], e.Verdicts[i]
		if v.Apply {
			r.Registry.SetOverride(cands[i].Kind, progs[i].interp)
			log.Info("health interpreter in use", "interpreter", hi.Name, "kind", cands[i].Kind.String())
		}
		if err := r.writeStatus(ctx, hi, progs[i], v.Active, v.Reason, v.Message); err != nil && firstErr == nil {
			firstErr = err
		}
	}
	for _, gvk := range e.Removed {
		r.Registry.ClearOverride(gvk)
		log.Info("health interpreter removed; built-in (if any) applies again", "interpreter", r.applied[gvk].Name, "kind", gvk.String())
	}
	r.applied = e.Winners
	for name := range r.cache {
		if !slices.ContainsFunc(cands, func(c expr.Candidate) bool { return c.Name == name }) {
			delete(r.cache, name)
		}
	}
	return reconcile.Result{}, firstErr
}

// compile returns hi's program, compiling only when its generation changed.
func (r *Reconciler) compile(hi *configv1alpha1.HealthInterpreter) compiled {
	if c, ok := r.cache[hi.Name]; ok && c.generation == hi.Generation {
		return c
	}
	interp, err := expr.Compile(hi.Spec.Health.Expression)
	c := compiled{generation: hi.Generation, interp: interp, err: err}
	r.cache[hi.Name] = c
	if err != nil && !r.ReadOnly {
		r.recorder.Eventf(hi, nil, corev1.EventTypeWarning, EventCompileError, "Compile", "%s", expr.Truncate(err.Error()))
	}
	return c
}

// writeStatus sets the Compiled and Active conditions, writing only when
// they change.
func (r *Reconciler) writeStatus(ctx context.Context, hi *configv1alpha1.HealthInterpreter, c compiled, active bool, reason, msg string) error {
	if r.ReadOnly {
		return nil
	}
	orig := hi.DeepCopy()
	st := &hi.Status
	compiledCond := metav1.Condition{Type: configv1alpha1.ConditionCompiled, Status: metav1.ConditionTrue, Reason: configv1alpha1.ReasonCompiled,
		Message: "the expression compiled", ObservedGeneration: hi.Generation}
	if c.err != nil {
		compiledCond.Status, compiledCond.Reason, compiledCond.Message = metav1.ConditionFalse, configv1alpha1.ReasonCompileError, expr.Truncate(c.err.Error())
	}
	activeCond := metav1.Condition{Type: configv1alpha1.ConditionActive, Status: metav1.ConditionFalse, Reason: reason, Message: msg, ObservedGeneration: hi.Generation}
	if active {
		activeCond.Status = metav1.ConditionTrue
	}
	changed := meta.SetStatusCondition(&st.Conditions, compiledCond)
	changed = meta.SetStatusCondition(&st.Conditions, activeCond) || changed
	if st.ObservedGeneration != hi.Generation {
		st.ObservedGeneration, changed = hi.Generation, true
	}
	if !changed || hi.DeletionTimestamp != nil {
		return nil
	}
	if active && !meta.IsStatusConditionTrue(orig.Status.Conditions, configv1alpha1.ConditionActive) {
		r.recorder.Eventf(hi, nil, corev1.EventTypeNormal, EventActivated, "Activate", "%s", msg)
	}
	return client.IgnoreNotFound(r.client.Status().Patch(ctx, hi, client.MergeFrom(orig)))
}
