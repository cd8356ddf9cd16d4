package cronfederatedhpa

import (
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	autoscalingv1alpha1 "github.com/shepherd-io/shepherd/api/autoscaling/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/controllerdeps"
)

// Setup registers the CronFederatedHPA controller: a CronFederatedHPA is
// looked at when its spec changes and at each rule's next time.
func Setup(d controllerdeps.Deps, opts Options) error {
	d = d.WithDefaults()
	opts = opts.withDefaults()
	r := &Reconciler{client: d.Client(), recorder: d.Recorder(ControllerName), opts: opts}
	return ctrl.NewControllerManagedBy(d.Manager).
		Named(ControllerName).
		For(&autoscalingv1alpha1.CronFederatedHPA{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		WithOptions(d.ControllerOptions(opts.Workers)).
		Complete(r)
}
