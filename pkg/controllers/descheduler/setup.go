package descheduler

import (
	"strings"

	"golang.org/x/time/rate"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/controller"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/controllers/internal/bindingutil"
)

// Setup registers the descheduler of both binding kinds
// ("descheduler-resourcebinding", "descheduler-clusterresourcebinding"),
// sharing one rate limiter.
func Setup(mgr ctrl.Manager, opts Options) error {
	opts = opts.withDefaults()
	limiter := opts.limiter()
	if err := setupKind(mgr, bindingutil.ResourceBindings(), opts, limiter); err != nil {
		return err
	}
	return setupKind(mgr, bindingutil.ClusterResourceBindings(), opts, limiter)
}

func setupKind[T workv1alpha1.BindingObject](mgr ctrl.Manager, kind bindingutil.Kind[T], opts Options, limiter *rate.Limiter) error {
	// Every binding change counts, status included: aggregatedStatus holds
	// the counts, and a reconcile that finds nothing due writes nothing.
	return ctrl.NewControllerManagedBy(mgr).
		Named(ControllerName + "-" + strings.ToLower(kind.Name)).
		For(kind.New()).
		WithOptions(controller.Options{MaxConcurrentReconciles: opts.Workers}).
		Complete(newReconciler(mgr, kind, opts, limiter))
}
