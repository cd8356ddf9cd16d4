package index

import (
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/controllerdeps"
)

// BindingsByDependent indexes ResourceBindings by each dependent in their
// spec.requiredBy, keyed by DependentKey: the dependencies controller
// finds the bindings of dependencies a dependent no longer needs with it.
const BindingsByDependent = "dependencies.shepherd.io/required-by"

// SetupBindingsByDependent registers BindingsByDependent, once.
func SetupBindingsByDependent(d controllerdeps.Deps) error {
	return register(d, BindingsByDependent, &workv1alpha1.ResourceBinding{}, BindingsByDependent, dependents)
}

// DependentKey is the key of BindingsByDependent for the dependent binding
// namespace/name.
func DependentKey(namespace, name string) string {
	return namespace + "/" + name
}

func dependents(o client.Object) []string {
	var out []string
	for _, s := range o.(*workv1alpha1.ResourceBinding).Spec.RequiredBy {
		out = append(out, DependentKey(s.Namespace, s.Name))
	}
	return out
}
