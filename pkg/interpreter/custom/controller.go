package custom

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
	"github.com/shepherd-io/shepherd/pkg/interpreter"
)

// ControllerName names the controller in logs, metrics and events.
const ControllerName = "interpreter-customization"

// Event reasons.
const (
	EventCompileError = "CompileError"
	EventActivated    = "Activated"
	EventKindNotFound = "KindNotFound"
)

// everything is the one request: which customization wins a kind depends
// on all of them.
var everything = reconcile.Request{NamespacedName: client.ObjectKey{Name: "all"}}

type compiled struct {
	generation int64
	result     *Compiled
	err        string
}

// Reconciler keeps package interpreter's customizations and the health
// registry's customization rules equal to the active
// ResourceInterpreterCustomizations, and reports on each whether it
// compiled, whether the hub serves its kind, and whether it is in use.
// Two customizations of one kind: the first by name wins. Run one per
// process: what it sets is in memory.
type Reconciler struct {
	Registry *health.Registry
	// ReadOnly applies the objects without writing their status: the
	// agent of a Pull cluster judges health with them, and the hub's
	// controller manager reports on them.
	ReadOnly bool

	client   client.Client
	mapper   meta.RESTMapper
	recorder events.EventRecorder
	cache    map[string]compiled
	applied  map[schema.GroupVersionKind]expr.InUse
}

// SetupWithManager registers the controller.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	r.client, r.mapper = mgr.GetClient(), mgr.GetRESTMapper()
	r.recorder = mgr.GetEventRecorder(ControllerName)
	r.cache, r.applied = map[string]compiled{}, map[schema.GroupVersionKind]expr.InUse{}
	return ctrl.NewControllerManagedBy(mgr).
		Named(ControllerName).
		Watches(&configv1alpha1.ResourceInterpreterCustomization{}, handler.EnqueueRequestsFromMapFunc(func(context.Context, client.Object) []reconcile.Request {
			return []reconcile.Request{everything}
		})).
		Complete(r)
}

// Reconcile recomputes every kind's customization (one worker).
func (r *Reconciler) Reconcile(ctx context.Context, _ reconcile.Request) (reconcile.Result, error) {
	log := logr.FromContextOrDiscard(ctx)
	list := &configv1alpha1.ResourceInterpreterCustomizationList{}
	if err := r.client.List(ctx, list); err != nil {
		return reconcile.Result{}, err
	}
	cands := make([]expr.Candidate, len(list.Items))
	ccs := make([]compiled, len(list.Items))
	for i := range list.Items {
		c := &list.Items[i]
		ccs[i] = r.compile(c)
		cands[i] = expr.Candidate{Name: c.Name, Generation: c.Generation, Kind: c.Spec.Target.GroupVersionKind(),
			Compiled: ccs[i].err == "", Deleting: c.DeletionTimestamp != nil}
	}
	e := expr.Elect(expr.Words{Object: "ResourceInterpreterCustomization", NotCompiled: "the customization does not compile", Serves: "interprets"},
		cands, r.applied)
	var firstErr error
	for i := range list.Items {
		c, v, gvk := &list.Items[i], e.Verdicts[i], cands[i].Kind
		if v.Apply {
			interpreter.SetCustom(gvk.GroupKind(), ccs[i].result.Custom)
			if ccs[i].result.Health != nil {
				r.Registry.SetCustom(gvk, ccs[i].result.Health)
			} else {
				r.Registry.ClearCustom(gvk)
			}
			log.Info("interpreter customization in use", "customization", c.Name, "kind", gvk.String())
		}
		if err := r.writeStatus(ctx, c, ccs[i], r.kindServed(c), v.Active, v.Reason, v.Message); err != nil && firstErr == nil {
			firstErr = err
		}
	}
	for _, gvk := range e.Removed {
		interpreter.ClearCustom(gvk.GroupKind())
		r.Registry.ClearCustom(gvk)
		log.Info("interpreter customization removed; built-in knowledge (if any) applies again", "customization", r.applied[gvk].Name, "kind", gvk.String())
	}
	r.applied = e.Winners
	for name := range r.cache {
		if !slices.ContainsFunc(cands, func(c expr.Candidate) bool { return c.Name == name }) {
			delete(r.cache, name)
		}
	}
	return reconcile.Result{}, firstErr
}

func (r *Reconciler) compile(c *configv1alpha1.ResourceInterpreterCustomization) compiled {
	if cc, ok := r.cache[c.Name]; ok && cc.generation == c.Generation {
		return cc
	}
	res, errs := Compile(c)
	cc := compiled{generation: c.Generation, result: res}
	if len(errs) > 0 {
		cc.err = expr.Truncate(errs.ToAggregate().Error())
		if !r.ReadOnly {
			r.recorder.Eventf(c, nil, corev1.EventTypeWarning, EventCompileError, "Compile", "%s", cc.err)
		}
	}
	r.cache[c.Name] = cc
	return cc
}

// kindServed reports whether the hub serves the target kind. A
// customization of a kind not served yet is still used (its CRD may come
// later); the condition says so.
func (r *Reconciler) kindServed(c *configv1alpha1.ResourceInterpreterCustomization) bool {
	gvk := c.Spec.Target.GroupVersionKind()
	_, err := r.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	return err == nil
}

func (r *Reconciler) writeStatus(ctx context.Context, c *configv1alpha1.ResourceInterpreterCustomization, cc compiled, found, active bool, reason, msg string) error {
	if r.ReadOnly {
		return nil
	}
	orig := c.DeepCopy()
	st := &c.Status
	gen := c.Generation
	compiledCond := metav1.Condition{Type: configv1alpha1.ConditionCompiled, Status: metav1.ConditionTrue, Reason: configv1alpha1.ReasonCompiled,
		Message: "every expression and path compiled", ObservedGeneration: gen}
	if cc.err != "" {
		compiledCond.Status, compiledCond.Reason, compiledCond.Message = metav1.ConditionFalse, configv1alpha1.ReasonCompileError, cc.err
	}
	kindCond := metav1.Condition{Type: configv1alpha1.ConditionKindFound, Status: metav1.ConditionTrue, Reason: configv1alpha1.ReasonFound,
		Message: "the hub serves " + c.Spec.Target.GroupVersionKind().String(), ObservedGeneration: gen}
	if !found {
		kindCond.Status, kindCond.Reason = metav1.ConditionFalse, configv1alpha1.ReasonNotFound
		kindCond.Message = "the hub does not serve " + c.Spec.Target.GroupVersionKind().String() + " (yet): install its CRD, or fix spec.target"
	}
	activeCond := metav1.Condition{Type: configv1alpha1.ConditionActive, Status: metav1.ConditionFalse, Reason: reason, Message: msg, ObservedGeneration: gen}
	if active {
		activeCond.Status = metav1.ConditionTrue
	}
	changed := meta.SetStatusCondition(&st.Conditions, compiledCond)
	changed = meta.SetStatusCondition(&st.Conditions, kindCond) || changed
	changed = meta.SetStatusCondition(&st.Conditions, activeCond) || changed
	if st.ObservedGeneration != gen {
		st.ObservedGeneration, changed = gen, true
	}
	if !changed || c.DeletionTimestamp != nil {
		return nil
	}
	if was := meta.FindStatusCondition(orig.Status.Conditions, configv1alpha1.ConditionKindFound); !found && (was == nil || was.Status != metav1.ConditionFalse) {
		r.recorder.Eventf(c, nil, corev1.EventTypeWarning, EventKindNotFound, "Resolve", "%s", kindCond.Message)
	}
	if active && !meta.IsStatusConditionTrue(orig.Status.Conditions, configv1alpha1.ConditionActive) {
		r.recorder.Eventf(c, nil, corev1.EventTypeNormal, EventActivated, "Activate", "%s", msg)
	}
	return client.IgnoreNotFound(r.client.Status().Patch(ctx, c, client.MergeFrom(orig)))
}
