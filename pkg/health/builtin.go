package health

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/shepherd-io/shepherd/pkg/interpreter"
)

// Default returns a registry holding the built-in interpreters.
func Default() *Registry {
	r := NewRegistry()
	RegisterBuiltins(r)
	return r
}

// RegisterBuiltins registers the built-in health rules of Kubernetes' own
// kinds, which package interpreter holds with the rest of what Shepherd
// knows per kind.
func RegisterBuiltins(r *Registry) {
	for _, gvk := range interpreter.HealthKinds() {
		r.Register(gvk, InterpreterFunc(func(obj *unstructured.Unstructured) Result {
			res, _ := interpreter.InterpretHealth(obj)
			return Result{Health: res.Health, Reason: res.Reason}
		}))
	}
}
