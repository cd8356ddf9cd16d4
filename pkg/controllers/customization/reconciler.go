package customization

import (
	"context"
	"slices"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	configv1alpha1 "github.com/shepherd-io/shepherd/api/config/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/celrule"
	"github.com/shepherd-io/shepherd/pkg/interpreter"
)

// Names of the two controllers in logs, metrics and events.
const (
	ControllerName       = "interpreter-customization"
	HealthControllerName = "health-interpreter"
)

// Event reasons.
const (
	EventCompileError = "CompileError"
	EventActivated    = "Activated"
	EventKindNotFound = "KindNotFound"
)

// everything is the one request: which object wins a kind depends on all
// of them, so each event recomputes the whole (small) set.
var everything = reconcile.Request{NamespacedName: client.ObjectKey{Name: "all"}}

// rules is what differs between the two CRDs that carry CEL rules.
type rules[T client.Object] struct {
	name  string
	words Words
	// compiledMessage is the Compiled condition's message on success.
	compiledMessage string
	newObject       func() T
	list            func(ctx context.Context, c client.Client) ([]T, error)
	target          func(T) schema.GroupVersionKind
	compile         func(T) (*interpreter.Compiled, field.ErrorList)
	status          func(T) (*int64, *[]metav1.Condition)
	// set and clear install and remove a winner's rules in their layer.
	set   func(in *interpreter.Layered, gvk schema.GroupVersionKind, c *interpreter.Custom)
	clear func(in *interpreter.Layered, gvk schema.GroupVersionKind)
	// reportsKind adds the KindFound condition.
	reportsKind bool
}

// Reconciler keeps one layer of an interpreter equal to the active
// objects of one CRD (ResourceInterpreterCustomizations or
// HealthInterpreters), and reports on each whether it compiled and is in
// use. Two objects for one kind: the first by name wins. Each interpreter
// has its own Reconcilers: what they set is in that interpreter only.
type Reconciler[T client.Object] struct {
	in *interpreter.Layered
	// readOnly applies the objects without writing their status: the
	// agent of a Pull cluster judges health with them, and the hub's
	// controller manager reports on them.
	readOnly bool
	rules    rules[T]

	client   client.Client
	mapper   meta.RESTMapper
	recorder events.EventRecorder
	cache    map[string]compiled
	applied  map[schema.GroupVersionKind]InUse
}

// compiled caches an object's compilation by generation: compiling is the
// costly part and the spec changes rarely.
type compiled struct {
	generation int64
	result     *interpreter.Compiled
	err        string
}

// newForCustomizations returns the controller teaching in the kinds
// ResourceInterpreterCustomizations describe (the customization layer).
func newForCustomizations(in *interpreter.Layered, readOnly bool) *Reconciler[*configv1alpha1.ResourceInterpreterCustomization] {
	type C = *configv1alpha1.ResourceInterpreterCustomization
	return &Reconciler[C]{in: in, readOnly: readOnly, rules: rules[C]{
		name:            ControllerName,
		words:           Words{Object: "ResourceInterpreterCustomization", NotCompiled: "the customization does not compile", Serves: "interprets"},
		compiledMessage: "every expression and path compiled",
		newObject:       func() C { return &configv1alpha1.ResourceInterpreterCustomization{} },
		list: func(ctx context.Context, c client.Client) ([]C, error) {
			l := &configv1alpha1.ResourceInterpreterCustomizationList{}
			err := c.List(ctx, l)
			return pointers(l.Items), err
		},
		target:  func(c C) schema.GroupVersionKind { return c.Spec.Target.GroupVersionKind() },
		compile: interpreter.CompileCustomization,
		status:  func(c C) (*int64, *[]metav1.Condition) { return &c.Status.ObservedGeneration, &c.Status.Conditions },
		set: func(in *interpreter.Layered, gvk schema.GroupVersionKind, c *interpreter.Custom) {
			in.SetCustom(gvk, c)
		},
		clear:       (*interpreter.Layered).ClearCustom,
		reportsKind: true,
	}}
}

// newForHealthInterpreters returns the controller keeping in's health
// rules (the top layer) equal to the active HealthInterpreters.
func newForHealthInterpreters(in *interpreter.Layered, readOnly bool) *Reconciler[*configv1alpha1.HealthInterpreter] {
	type H = *configv1alpha1.HealthInterpreter
	return &Reconciler[H]{in: in, readOnly: readOnly, rules: rules[H]{
		name:            HealthControllerName,
		words:           Words{Object: "HealthInterpreter", NotCompiled: "the expression does not compile", Serves: "judges the health of"},
		compiledMessage: "the expression compiled",
		newObject:       func() H { return &configv1alpha1.HealthInterpreter{} },
		list: func(ctx context.Context, c client.Client) ([]H, error) {
			l := &configv1alpha1.HealthInterpreterList{}
			err := c.List(ctx, l)
			return pointers(l.Items), err
		},
		target:  func(h H) schema.GroupVersionKind { return h.Spec.Target.GroupVersionKind() },
		compile: interpreter.CompileHealthInterpreter,
		status:  func(h H) (*int64, *[]metav1.Condition) { return &h.Status.ObservedGeneration, &h.Status.Conditions },
		set: func(in *interpreter.Layered, gvk schema.GroupVersionKind, c *interpreter.Custom) {
			in.SetHealthRule(gvk, c.Health)
		},
		clear: (*interpreter.Layered).ClearHealthRule,
	}}
}

func pointers[E any](items []E) []*E {
	out := make([]*E, len(items))
	for i := range items {
		out[i] = &items[i]
	}
	return out
}

// Reconcile recomputes every kind's rules (one worker, so the maps need
// no lock).
func (r *Reconciler[T]) Reconcile(ctx context.Context, _ reconcile.Request) (reconcile.Result, error) {
	log := logr.FromContextOrDiscard(ctx)
	items, err := r.rules.list(ctx, r.client)
	if err != nil {
		return reconcile.Result{}, err
	}
	cands := make([]Candidate, len(items))
	ccs := make([]compiled, len(items))
	for i, obj := range items {
		ccs[i] = r.compile(obj)
		cands[i] = Candidate{Name: obj.GetName(), Generation: obj.GetGeneration(), Kind: r.rules.target(obj),
			Compiled: ccs[i].err == "", Deleting: obj.GetDeletionTimestamp() != nil}
	}
	e := Elect(r.rules.words, cands, r.applied)
	var firstErr error
	for i, obj := range items {
		v, gvk := e.Verdicts[i], cands[i].Kind
		if v.Apply {
			r.rules.set(r.in, gvk, ccs[i].result.Custom)
			log.Info(r.rules.words.Object+" in use", "object", obj.GetName(), "kind", gvk.String())
		}
		if err := r.writeStatus(ctx, obj, ccs[i], v); err != nil && firstErr == nil {
			firstErr = err
		}
	}
	for _, gvk := range e.Removed {
		r.rules.clear(r.in, gvk)
		log.Info(r.rules.words.Object+" removed; the layer below (if any) applies again", "object", r.applied[gvk].Name, "kind", gvk.String())
	}
	r.applied = e.Winners
	for name := range r.cache {
		if !slices.ContainsFunc(cands, func(c Candidate) bool { return c.Name == name }) {
			delete(r.cache, name)
		}
	}
	return reconcile.Result{}, firstErr
}

// compile returns obj's compilation, compiling only when its generation
// changed.
func (r *Reconciler[T]) compile(obj T) compiled {
	if cc, ok := r.cache[obj.GetName()]; ok && cc.generation == obj.GetGeneration() {
		return cc
	}
	res, errs := r.rules.compile(obj)
	cc := compiled{generation: obj.GetGeneration(), result: res}
	if len(errs) > 0 {
		cc.err = celrule.Truncate(errs.ToAggregate().Error())
		if !r.readOnly {
			r.recorder.Eventf(obj, nil, corev1.EventTypeWarning, EventCompileError, "Compile", "%s", cc.err)
		}
	}
	r.cache[obj.GetName()] = cc
	return cc
}

// kindServed reports whether the hub serves gvk. A customization of a
// kind not served yet is still used (its CRD may come later); the
// KindFound condition says so.
func (r *Reconciler[T]) kindServed(gvk schema.GroupVersionKind) bool {
	_, err := r.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	return err == nil
}

// writeStatus sets the Compiled, KindFound (customizations) and Active
// conditions, writing only when they change.
func (r *Reconciler[T]) writeStatus(ctx context.Context, obj T, cc compiled, v Verdict) error {
	if r.readOnly {
		return nil
	}
	orig := obj.DeepCopyObject().(T)
	observed, conds := r.rules.status(obj)
	gen := obj.GetGeneration()
	gvk := r.rules.target(obj)
	compiledCond := metav1.Condition{Type: configv1alpha1.ConditionCompiled, Status: metav1.ConditionTrue, Reason: configv1alpha1.ReasonCompiled,
		Message: r.rules.compiledMessage, ObservedGeneration: gen}
	if cc.err != "" {
		compiledCond.Status, compiledCond.Reason, compiledCond.Message = metav1.ConditionFalse, configv1alpha1.ReasonCompileError, cc.err
	}
	activeCond := metav1.Condition{Type: configv1alpha1.ConditionActive, Status: metav1.ConditionFalse, Reason: v.Reason, Message: v.Message, ObservedGeneration: gen}
	if v.Active {
		activeCond.Status = metav1.ConditionTrue
	}
	changed := meta.SetStatusCondition(conds, compiledCond)
	found := true
	var kindCond metav1.Condition
	if r.rules.reportsKind {
		found = r.kindServed(gvk)
		kindCond = metav1.Condition{Type: configv1alpha1.ConditionKindFound, Status: metav1.ConditionTrue, Reason: configv1alpha1.ReasonFound,
			Message: "the hub serves " + gvk.String(), ObservedGeneration: gen}
		if !found {
			kindCond.Status, kindCond.Reason = metav1.ConditionFalse, configv1alpha1.ReasonNotFound
			kindCond.Message = "the hub does not serve " + gvk.String() + " (yet): install its CRD, or fix spec.target"
		}
		changed = meta.SetStatusCondition(conds, kindCond) || changed
	}
	changed = meta.SetStatusCondition(conds, activeCond) || changed
	if *observed != gen {
		*observed, changed = gen, true
	}
	if !changed || obj.GetDeletionTimestamp() != nil {
		return nil
	}
	_, origConds := r.rules.status(orig)
	if was := meta.FindStatusCondition(*origConds, configv1alpha1.ConditionKindFound); !found && (was == nil || was.Status != metav1.ConditionFalse) {
		r.recorder.Eventf(obj, nil, corev1.EventTypeWarning, EventKindNotFound, "Resolve", "%s", kindCond.Message)
	}
	if v.Active && !meta.IsStatusConditionTrue(*origConds, configv1alpha1.ConditionActive) {
		r.recorder.Eventf(obj, nil, corev1.EventTypeNormal, EventActivated, "Activate", "%s", v.Message)
	}
	return client.IgnoreNotFound(r.client.Status().Patch(ctx, obj, client.MergeFrom(orig)))
}
