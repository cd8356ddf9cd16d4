package index

import (
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/controllerdeps"
	"github.com/shepherd-io/shepherd/pkg/controllers/internal/bindingutil"
	"github.com/shepherd-io/shepherd/pkg/names"
)

const (
	// BindingsByGoverningPolicy indexes bindings of both kinds by the
	// policy governing them (GoverningPolicy), keyed by names.PolicyRef:
	// the policy status controller finds the templates a policy governs
	// with it.
	BindingsByGoverningPolicy = "policystatus.shepherd.io/governing"
	// BindingsByTiedPolicy indexes bindings of both kinds by each policy
	// tied on them (TiedPolicies), keyed by names.PolicyRef: the policy
	// status controller finds a policy's ties with it.
	BindingsByTiedPolicy = "policystatus.shepherd.io/tied"
)

// SetupBindingsByGoverningPolicy registers BindingsByGoverningPolicy for
// the bindings of kind, once per kind.
func SetupBindingsByGoverningPolicy[T workv1alpha1.BindingObject](d controllerdeps.Deps, kind bindingutil.Kind[T]) error {
	return register(d, BindingsByGoverningPolicy+" "+kind.Name, kind.New(), BindingsByGoverningPolicy, GoverningPolicy)
}

// SetupBindingsByTiedPolicy registers BindingsByTiedPolicy for the
// bindings of kind, once per kind.
func SetupBindingsByTiedPolicy[T workv1alpha1.BindingObject](d controllerdeps.Deps, kind bindingutil.Kind[T]) error {
	return register(d, BindingsByTiedPolicy+" "+kind.Name, kind.New(), BindingsByTiedPolicy, TiedPolicies)
}

// GoverningPolicy is the policy governing a binding, as names.PolicyRef:
// none while it is unclaimed (its policy no longer selects its template;
// see workv1alpha1.Unclaimed). Exported because the policy status
// controller also wakes that policy on the binding's events.
func GoverningPolicy(o client.Object) []string {
	b, ok := o.(workv1alpha1.BindingObject)
	if !ok || workv1alpha1.Unclaimed(b.GetBindingStatus()) {
		return nil
	}
	if ref := b.GetBindingSpec().PolicyRef; ref != nil {
		return []string{names.PolicyRef(ref.Kind, ref.Namespace, ref.Name)}
	}
	return nil
}

// TiedPolicies are the policies tied on a binding
// (AnnotationTiedPolicies), as names.PolicyRef. Exported because the
// policy status controller also reads them from the binding it holds.
func TiedPolicies(o client.Object) []string {
	v := o.GetAnnotations()[workv1alpha1.AnnotationTiedPolicies]
	if v == "" {
		return nil
	}
	return strings.Split(v, ",")
}
