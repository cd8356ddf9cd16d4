package index

import (
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/controllerdeps"
	"github.com/shepherd-io/shepherd/pkg/controllers/internal/bindingutil"
	"github.com/shepherd-io/shepherd/pkg/placement"
)

// BindingsByClass indexes bindings of both kinds by the classes of cluster
// events that may concern them (ClassEverywhere, ClassRetry,
// ClassOverflow): the scheduler finds the bindings a cluster event wakes
// with it, without scanning them all.
const BindingsByClass = "scheduling.shepherd.io/class"

// The keys of BindingsByClass; a binding may have several.
const (
	// ClassEverywhere: the placement takes every eligible cluster.
	ClassEverywhere = "everywhere"
	// ClassRetry: the binding is not (successfully) scheduled.
	ClassRetry = "retry"
	// ClassOverflow: the binding may hold replicas on overflow clusters.
	ClassOverflow = "overflow"
)

// SetupBindingsByClass registers BindingsByClass for the bindings of kind,
// once per kind.
func SetupBindingsByClass[T workv1alpha1.BindingObject](d controllerdeps.Deps, kind bindingutil.Kind[T]) error {
	return register(d, BindingsByClass+" "+kind.Name, kind.New(), BindingsByClass, classes)
}

func classes(obj client.Object) []string {
	b := obj.(workv1alpha1.BindingObject)
	var out []string
	if placement.PlacesEverywhere(b.GetBindingSpec()) {
		out = append(out, ClassEverywhere)
	}
	if !meta.IsStatusConditionTrue(b.GetBindingStatus().Conditions, workv1alpha1.ConditionScheduled) {
		out = append(out, ClassRetry)
	}
	if placement.Overflows(b.GetBindingSpec(), b.GetBindingStatus()) {
		out = append(out, ClassOverflow)
	}
	return out
}
