package clusterstatus

import (
	"context"

	"github.com/shepherd-io/shepherd/pkg/conflicts"

	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/controllerdeps"
)

// Setup registers the controller. Status writes do not retrigger it (only
// spec changes do); the periodic requeue drives probes.
func Setup(d controllerdeps.Deps, opts Options) error {
	d = d.WithDefaults()
	mgr := d.Manager
	r := &Reconciler{
		Client:      d.Client(),
		Recorder:    d.Recorder(ControllerName),
		Options:     opts.withDefaults(),
		clients:     d.Clients,
		pullCluster: d.PullCluster,
		clock:       d.Clock,
		conflicts:   conflicts.NewRequeue(),
	}
	r.summaries = newSummarizers()
	if err := mgr.Add(manager.RunnableFunc(func(ctx context.Context) error {
		<-ctx.Done()
		r.summaries.stopAll()
		return nil
	})); err != nil {
		return err
	}
	return builder.ControllerManagedBy(mgr).
		Named(ControllerName).
		For(&clusterv1alpha1.Cluster{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		WithOptions(d.ControllerOptions(r.Options.Workers)).
		Complete(r)
}
