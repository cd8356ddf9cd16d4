// Package health decides whether a workload's copy on a member cluster is
// Healthy, Unhealthy or Unknown, from the object as the member reports it.
//
// Health feeds application failover (a copy Unhealthy for longer than the
// policy's toleration is moved elsewhere) and the binding's aggregated
// status, so interpreters err towards Unhealthy only for states that a user
// would call broken or not yet serving, and towards Unknown for kinds they
// do not understand: Unknown never triggers failover.
//
// Interpreters are looked up by GroupVersionKind in a Registry. The built-in
// ones cover the workload kinds Kubernetes ships. User-defined interpreters
// (package health/cel, from HealthInterpreter objects) come and go at run
// time, so they live in a separate layer (SetOverride, ClearOverride) that
// takes precedence: removing one brings the built-in back.
package health

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
)

// Result is an interpreter's verdict with a short reason for humans (events,
// logs); the reason is not part of the API.
type Result struct {
	Health policyv1alpha1.ResourceHealth
	Reason string
}

// Interpreter judges the health of one object. The object is what the
// member returned (spec, status, metadata), never mutated.
type Interpreter interface {
	Interpret(obj *unstructured.Unstructured) Result
}

// InterpreterFunc adapts a function to Interpreter.
type InterpreterFunc func(obj *unstructured.Unstructured) Result

// Interpret calls f.
func (f InterpreterFunc) Interpret(obj *unstructured.Unstructured) Result { return f(obj) }

// Registry maps GroupVersionKinds to interpreters. It is safe for concurrent
// use; registration normally happens at start-up.
type Registry struct {
	mu        sync.RWMutex
	m         map[schema.GroupVersionKind]Interpreter
	overrides map[schema.GroupVersionKind]Interpreter
	// customs are the health rules of ResourceInterpreterCustomizations:
	// over the registered ones, under the overrides (HealthInterpreters).
	customs   map[schema.GroupVersionKind]Interpreter
	listeners []func(schema.GroupVersionKind)
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{m: map[schema.GroupVersionKind]Interpreter{}, overrides: map[schema.GroupVersionKind]Interpreter{},
		customs: map[schema.GroupVersionKind]Interpreter{}}
}

// SetOverride sets a run-time interpreter for gvk that takes precedence
// over the one registered with Register.
func (r *Registry) SetOverride(gvk schema.GroupVersionKind, i Interpreter) {
	r.mu.Lock()
	r.overrides[gvk] = i
	r.mu.Unlock()
	r.changed(gvk)
}

// ClearOverride removes gvk's run-time interpreter; the registered one, if
// any, applies again.
func (r *Registry) ClearOverride(gvk schema.GroupVersionKind) {
	r.mu.Lock()
	delete(r.overrides, gvk)
	r.mu.Unlock()
	r.changed(gvk)
}

// SetCustom sets the health rule of a ResourceInterpreterCustomization for
// gvk: it takes precedence over the registered interpreter, and a
// HealthInterpreter's override takes precedence over it.
func (r *Registry) SetCustom(gvk schema.GroupVersionKind, i Interpreter) {
	r.mu.Lock()
	r.customs[gvk] = i
	r.mu.Unlock()
	r.changed(gvk)
}

// ClearCustom removes gvk's customization rule.
func (r *Registry) ClearCustom(gvk schema.GroupVersionKind) {
	r.mu.Lock()
	delete(r.customs, gvk)
	r.mu.Unlock()
	r.changed(gvk)
}

// OnOverrideChange registers f to be called with the kind whose run-time
// interpreter (an override or a customization) was set or cleared, after
// the change is visible to Lookup.
//
// Health is computed when a member object changes; without this, a new
// interpreter would only apply to an object on its next change in the
// member, and never to one that does not change (a ConfigMap has no
// status). The work status controller uses it to re-evaluate the objects
// of that kind.
func (r *Registry) OnOverrideChange(f func(schema.GroupVersionKind)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.listeners = append(r.listeners, f)
}

// changed calls the listeners, outside the lock: they may call Lookup.
func (r *Registry) changed(gvk schema.GroupVersionKind) {
	r.mu.RLock()
	ls := slices.Clone(r.listeners)
	r.mu.RUnlock()
	for _, f := range ls {
		f(gvk)
	}
}

// Register sets the interpreter for gvk, replacing any earlier one so that a
// user-defined interpreter can override a built-in.
func (r *Registry) Register(gvk schema.GroupVersionKind, i Interpreter) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.m[gvk] = i
}

// Lookup returns the interpreter for gvk, if any.
func (r *Registry) Lookup(gvk schema.GroupVersionKind) (Interpreter, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if i, ok := r.overrides[gvk]; ok {
		return i, true
	}
	if i, ok := r.customs[gvk]; ok {
		return i, true
	}
	i, ok := r.m[gvk]
	return i, ok
}

// Kinds lists the GroupVersionKinds with an interpreter, sorted.
func (r *Registry) Kinds() []schema.GroupVersionKind {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]schema.GroupVersionKind, 0, len(r.m)+len(r.overrides))
	for gvk := range r.m {
		out = append(out, gvk)
	}
	for _, layer := range []map[schema.GroupVersionKind]Interpreter{r.overrides, r.customs} {
		for gvk := range layer {
			if !slices.Contains(out, gvk) {
				out = append(out, gvk)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

// Interpret judges obj with the interpreter registered for its kind; kinds
// without one are Unknown.
func (r *Registry) Interpret(obj *unstructured.Unstructured) Result {
	if obj == nil {
		return Result{Health: policyv1alpha1.ResourceUnknown, Reason: "object not found"}
	}
	i, ok := r.Lookup(obj.GroupVersionKind())
	if !ok {
		return Result{Health: policyv1alpha1.ResourceUnknown, Reason: "no health interpreter for " + obj.GroupVersionKind().String()}
	}
	return i.Interpret(obj)
}

// typed adapts an interpreter of a typed object (e.g. *appsv1.Deployment)
// to Interpreter by converting from unstructured. A conversion failure means
// the member sent something we cannot read: Unknown.
func typed[T any](interpret func(*T) Result) Interpreter {
	return InterpreterFunc(func(obj *unstructured.Unstructured) Result {
		t := new(T)
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, t); err != nil {
			return Result{Health: policyv1alpha1.ResourceUnknown, Reason: fmt.Sprintf("cannot decode %s: %v", obj.GetKind(), err)}
		}
		return interpret(t)
	})
}

func healthy(reason string) Result {
	return Result{Health: policyv1alpha1.ResourceHealthy, Reason: reason}
}

func unhealthy(format string, args ...any) Result {
	return Result{Health: policyv1alpha1.ResourceUnhealthy, Reason: fmt.Sprintf(format, args...)}
}

func unknown(format string, args ...any) Result {
	return Result{Health: policyv1alpha1.ResourceUnknown, Reason: fmt.Sprintf(format, args...)}
}

// Observation is what Shepherd records of a member object in its Work: the
// raw status, the health, and the generation the status belongs to.
type Observation struct {
	Status     *runtime.RawExtension
	Health     policyv1alpha1.ResourceHealth
	Generation int64
}

// Observe returns the observation of obj; a missing object (nil) has no
// status, Unknown health and generation 0.
func (r *Registry) Observe(obj *unstructured.Unstructured) (Observation, error) {
	if obj == nil {
		return Observation{Health: policyv1alpha1.ResourceUnknown}, nil
	}
	o := Observation{Health: r.Interpret(obj).Health, Generation: obj.GetGeneration()}
	if st, ok := obj.Object["status"]; ok && st != nil {
		b, err := json.Marshal(st)
		if err != nil {
			return Observation{}, fmt.Errorf("encoding the status of %s %s: %w", obj.GetKind(), obj.GetName(), err)
		}
		o.Status = &runtime.RawExtension{Raw: b}
	}
	return o, nil
}
