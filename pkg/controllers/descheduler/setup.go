package descheduler

import (
	"strings"

	"golang.org/x/time/rate"
	ctrl "sigs.k8s.io/controller-runtime"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/controllerdeps"
	"github.com/shepherd-io/shepherd/pkg/controllers/internal/bindingutil"
)

// Setup registers the descheduler of both binding kinds
// ("descheduler-resourcebinding", "descheduler-clusterresourcebinding"),
// sharing one rate limiter.
func Setup(d controllerdeps.Deps, opts Options) error {
	d = d.WithDefaults()
	opts = opts.withDefaults()
	limiter := opts.limiter()
	if err := setupKind(d, bindingutil.ResourceBindings(), opts, limiter); err != nil {
		return err
	}
	return setupKind(d, bindingutil.ClusterResourceBindings(), opts, limiter)
}

func setupKind[T workv1alpha1.BindingObject](d controllerdeps.Deps, kind bindingutil.Kind[T], opts Options, limiter *rate.Limiter) error {
	mgr := d.Manager
	// Every binding change counts, status included: aggregatedStatus holds
	// the counts, and a reconcile that finds nothing due writes nothing.
	return ctrl.NewControllerManagedBy(mgr).
		Named(ControllerName + "-" + strings.ToLower(kind.Name)).
		For(kind.New()).
		WithOptions(d.ControllerOptions(opts.Workers)).
		Complete(newReconciler(d, kind, opts, limiter))
}
