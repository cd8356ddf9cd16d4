// Package index is the one definition of the hub's cache indexes: each
// index's name, the function computing its keys and the function
// registering it are here, and each is registered once per manager
// (controllerdeps.Deps.Once), whichever controllers ask for it. The
// indexes two controllers read (WorksByBinding, BindingsByTargetCluster)
// are here for that reason, and the ones a single controller reads
// (BindingsByClass, BindingsByGoverningPolicy, BindingsByTiedPolicy,
// BindingsByDependent, TasksByPendingBinding) so that every index of the
// hub is found in one place.
package index

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/controllerdeps"
	"github.com/shepherd-io/shepherd/pkg/controllers/internal/bindingutil"
)

const (
	// WorksByBinding indexes Works by their binding, keyed by
	// names.BindingRef.String() ("<kind>/<namespace>/<name>"): the binding
	// controller and the work status controller find a binding's Works
	// with it.
	WorksByBinding = "shepherd.io/works-by-binding"
	// BindingsByTargetCluster indexes bindings of both kinds by the names
	// of their active targets (Scheduled and Bound): the scheduler and
	// failover find the bindings on a cluster that changed with it.
	BindingsByTargetCluster = "shepherd.io/bindings-by-target-cluster"
)

// SetupWorksByBinding registers WorksByBinding, once.
func SetupWorksByBinding(d controllerdeps.Deps) error {
	return register(d, WorksByBinding, &workv1alpha1.Work{}, WorksByBinding, worksByBinding)
}

// SetupBindingsByTargetCluster registers BindingsByTargetCluster for the
// bindings of kind, once per kind.
func SetupBindingsByTargetCluster[T workv1alpha1.BindingObject](d controllerdeps.Deps, kind bindingutil.Kind[T]) error {
	return register(d, BindingsByTargetCluster+" "+kind.Name, kind.New(), BindingsByTargetCluster, targetClusters)
}

func worksByBinding(o client.Object) []string {
	if ref, ok := bindingutil.BindingOf(o.(*workv1alpha1.Work)); ok {
		return []string{ref.String()}
	}
	return nil
}

func targetClusters(o client.Object) []string {
	var out []string
	for _, t := range bindingutil.ActiveTargets(o.(workv1alpha1.BindingObject).GetBindingSpec().Clusters) {
		out = append(out, t.Name)
	}
	return out
}

// register adds the index name on obj's kind with keys to the manager's
// cache, once among the controllers sharing d under the key once (the
// index's name, and the kind when one index covers both binding kinds).
func register(d controllerdeps.Deps, once string, obj client.Object, name string, keys client.IndexerFunc) error {
	return d.Once(once, func() error {
		return d.Manager.GetFieldIndexer().IndexField(context.Background(), obj, name, keys)
	})
}
