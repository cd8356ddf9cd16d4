package interpreter

import (
	"slices"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
)

// Interpreter is everything Shepherd knows about resource kinds. One is
// built per process (New) and handed to every controller and command that
// needs to know a kind: nothing reads per-kind knowledge from anywhere
// else, so a kind taught at run time (a ResourceInterpreterCustomization,
// a HealthInterpreter) is taught to all of them at once.
type Interpreter interface {
	// Replicas reads how many replicas a template asks for and what one
	// replica needs: 0 and nil for kinds without replicas.
	Replicas(obj *unstructured.Unstructured) (int32, *workv1alpha1.ReplicaRequirements, error)
	// ReviseReplicas returns obj revised for each target's share of a
	// Divided placement.
	ReviseReplicas(obj *unstructured.Unstructured, targets []workv1alpha1.TargetCluster) (map[string]*unstructured.Unstructured, error)
	// Prune removes from a manifest about to be sent to members the
	// values the hub allocated that a member allocates itself.
	Prune(obj *unstructured.Unstructured)
	// AggregateStatus sums the kind's counters over the members' statuses.
	AggregateStatus(gk schema.GroupKind, items []workv1alpha1.AggregatedStatusItem) (map[string]any, bool)
	// ObservesGeneration reports whether the kind's status carries
	// observedGeneration.
	ObservesGeneration(gk schema.GroupKind) bool
	// ReadyReplicas reads, from a member copy's raw status, how many of
	// its replicas are ready.
	ReadyReplicas(gk schema.GroupKind, status *runtime.RawExtension) (int32, bool)
	// StatusReplicas reads, from a member copy's raw status, how many
	// replicas the member runs for it.
	StatusReplicas(gk schema.GroupKind, status *runtime.RawExtension) (int32, bool)
	// Health judges a member's copy: Healthy, Unhealthy or Unknown.
	Health(obj *unstructured.Unstructured) HealthResult
	// Dependencies lists the objects a template needs beside it.
	Dependencies(obj *unstructured.Unstructured) ([]Dependency, error)
	// DependencyKinds are the kinds Dependencies may name today.
	DependencyKinds() []schema.GroupVersionKind
	// Retain keeps in desired the fields a member controller owns.
	Retain(desired, observed *unstructured.Unstructured) error
	// PodSpecPath is where the kind keeps the pod spec its replicas run.
	PodSpecPath(gk schema.GroupKind) []string
	// PodSelector returns the selector of the pods a workload runs.
	PodSelector(obj *unstructured.Unstructured) (labels.Selector, bool)
	// PodComponents returns a workload's component names and which of
	// them each of its pods runs, by the labels its operator writes.
	PodComponents(obj *unstructured.Unstructured) ([]string, PodComponent, bool)
	// Sensitive reports whether the kind's values are secret: diffs of
	// its objects show hashes, never values.
	Sensitive(gk schema.GroupKind) bool
	// DefinesAPI reports whether an object of the kind defines an API (a
	// CustomResourceDefinition): removing one from a member removes every
	// object of its API there, whoever made them.
	DefinesAPI(gk schema.GroupKind) bool
	// Components lists the pod templates of a workload made of several,
	// each with its replicas and what one replica needs: nil for a kind
	// placed as one object.
	Components(obj *unstructured.Unstructured) ([]Component, error)
	// HasComponents reports whether the kind's workloads are read as
	// components; false means they are known only as one object.
	HasComponents(gk schema.GroupKind) bool
	// OnChange registers f to hear of every kind whose knowledge changed
	// at run time, once the change is visible.
	OnChange(f func(schema.GroupVersionKind))
}

// Layered is the Interpreter: what Shepherd knows of a kind is looked up
// in three layers, the first that has an answer winning:
//
//  1. HealthInterpreters (SetHealthRule), for health only;
//  2. ResourceInterpreterCustomizations (SetCustom), field by field: an
//     operation the customization leaves out keeps the built-in answer;
//  3. the built-in kinds (kinds.go).
//
// Layers 1 and 2 change at run time; each Layered has its own, so two
// interpreters (two agents in one process, two tests) never see each
// other's. It is safe for concurrent use.
type Layered struct {
	mu sync.RWMutex
	// customs are the customizations by group and kind (every version of a
	// kind keeps its fields in the same places).
	customs map[schema.GroupKind]*Custom
	// customHealth and healthRules are health rules by the exact version
	// they were written for, as the built-in rules are.
	customHealth map[schema.GroupVersionKind]HealthFunc
	healthRules  map[schema.GroupVersionKind]HealthFunc
	listeners    []func(schema.GroupVersionKind)
}

var _ Interpreter = (*Layered)(nil)

// HealthFunc judges the health of a member object.
type HealthFunc func(obj *unstructured.Unstructured) HealthResult

// New returns an interpreter that knows the built-in kinds only.
func New() *Layered {
	return &Layered{customs: map[schema.GroupKind]*Custom{}, customHealth: map[schema.GroupVersionKind]HealthFunc{},
		healthRules: map[schema.GroupVersionKind]HealthFunc{}}
}

// builtinOnly backs Builtin. It is never taught anything: only its
// Interpreter methods are reachable.
var builtinOnly Interpreter = New()

// Builtin returns an interpreter of the built-in kinds only, which never
// changes: for offline tools that read a file, not a hub, so that there
// is nothing to teach them (`shepherd plan`, `shepherd bench`), and for
// tests. A component that serves a hub is given the process's interpreter
// instead, or it would misread the kinds customizations teach;
// TestBuiltinCallers lists the callers allowed.
func Builtin() Interpreter { return builtinOnly }

// SetCustom makes c the customization of gvk's kind, over its built-in
// knowledge; c's health rule, if any, judges gvk's objects.
func (l *Layered) SetCustom(gvk schema.GroupVersionKind, c *Custom) {
	l.mu.Lock()
	l.customs[gvk.GroupKind()] = c
	if c != nil && c.Health != nil {
		l.customHealth[gvk] = c.Health
	} else {
		delete(l.customHealth, gvk)
	}
	l.mu.Unlock()
	l.changed(gvk)
}

// ClearCustom removes gvk's customization: the built-in knowledge, if any,
// applies again.
func (l *Layered) ClearCustom(gvk schema.GroupVersionKind) {
	l.mu.Lock()
	delete(l.customs, gvk.GroupKind())
	delete(l.customHealth, gvk)
	l.mu.Unlock()
	l.changed(gvk)
}

// SetHealthRule makes f judge the health of gvk's objects, over any
// customization and built-in rule (a HealthInterpreter).
func (l *Layered) SetHealthRule(gvk schema.GroupVersionKind, f HealthFunc) {
	l.mu.Lock()
	l.healthRules[gvk] = f
	l.mu.Unlock()
	l.changed(gvk)
}

// ClearHealthRule removes gvk's health rule; the customization's or the
// built-in one, if any, applies again.
func (l *Layered) ClearHealthRule(gvk schema.GroupVersionKind) {
	l.mu.Lock()
	delete(l.healthRules, gvk)
	l.mu.Unlock()
	l.changed(gvk)
}

// OnChange registers f to be called with the kind whose customization or
// health rule was set or cleared, once the change is visible: objects of
// that kind seen before must be interpreted again (a template's replicas,
// a member copy's health), though they did not change.
func (l *Layered) OnChange(f func(schema.GroupVersionKind)) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.listeners = append(l.listeners, f)
}

// changed calls the listeners outside the lock: they may ask l.
func (l *Layered) changed(gvk schema.GroupVersionKind) {
	l.mu.RLock()
	ls := slices.Clone(l.listeners)
	l.mu.RUnlock()
	for _, f := range ls {
		f(gvk)
	}
}

// lookup returns what l knows of gk: the built-in entry with the
// customization, if any, laid over it; nil when neither exists.
func (l *Layered) lookup(gk schema.GroupKind) *kind {
	l.mu.RLock()
	c := l.customs[gk]
	l.mu.RUnlock()
	return overlay(builtin[gk], c)
}

// overlay lays c over b, field by field; either may be nil.
func overlay(b *kind, c *Custom) *kind {
	if c == nil {
		return b
	}
	k := &kind{}
	if b != nil {
		*k = *b
	}
	if c.Replicas != nil {
		k.replicasFn, k.job, k.pod = c.Replicas, false, false
	}
	if c.ReplicasPath != nil {
		k.replicas = c.ReplicasPath
	}
	if c.PodSpec != nil {
		k.podSpec = c.PodSpec
	}
	if c.Summed != nil {
		k.summed = c.Summed
	}
	if c.ObservesGeneration != nil {
		k.observesGeneration = *c.ObservesGeneration
	}
	if c.Dependencies != nil {
		k.dependenciesFn = c.Dependencies
	}
	if c.Retain != nil {
		k.retain = c.Retain
	}
	if c.Sensitive {
		k.sensitive = true
	}
	if c.Components != nil {
		k.components = c.Components
	}
	return k
}
