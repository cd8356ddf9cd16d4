package federatedhpa

import (
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	autoscalingv1alpha1 "github.com/shepherd-io/shepherd/api/autoscaling/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/controllerdeps"
)

// Setup registers the FederatedHPA controller: each FederatedHPA is
// computed when its spec changes and every sync period after.
func Setup(d controllerdeps.Deps, opts Options) error {
	d = d.WithDefaults()
	if opts.Now == nil {
		opts.Now = d.Clock.Now
	}
	opts = opts.withDefaults()
	if opts.Members == nil {
		opts.Members = ByMode(NewMembers(d.Clients), NewPullMembers(d.Client(), opts.MetricMaxAge, opts.Now))
	}
	r := &Reconciler{client: d.Client(), recorder: d.Recorder(ControllerName), opts: opts, history: map[types.NamespacedName]history{}}
	return ctrl.NewControllerManagedBy(d.Manager).
		Named(ControllerName).
		// Its own status writes would bring it back at once otherwise.
		For(&autoscalingv1alpha1.FederatedHPA{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		WithOptions(d.ControllerOptions(opts.Workers)).
		Complete(r)
}
