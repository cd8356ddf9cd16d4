package customization

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/shepherd-io/shepherd/pkg/controllerdeps"
)

// Options choose which of the package's two controllers Setup registers.
type Options struct {
	// Controllers names them: ControllerName (ResourceInterpreterCustomizations),
	// HealthControllerName (HealthInterpreters), or both, the default. The
	// registry sets up each as an entry of its own, so that --controllers
	// picks them apart.
	Controllers []string
}

func (o Options) withDefaults() Options {
	if len(o.Controllers) == 0 {
		o.Controllers = []string{ControllerName, HealthControllerName}
	}
	return o
}

// Setup registers the controllers opts names: ControllerName keeps
// d.Interpreter's customization layer, HealthControllerName its health
// rules. An agent (d.PullCluster set) applies the objects read-only.
func Setup(d controllerdeps.Deps, opts Options) error {
	d = d.WithDefaults()
	opts = opts.withDefaults()
	for _, name := range opts.Controllers {
		var err error
		switch name {
		case ControllerName:
			err = newForCustomizations(d.Interpreter, d.Agent()).setup(d)
		case HealthControllerName:
			err = newForHealthInterpreters(d.Interpreter, d.Agent()).setup(d)
		default:
			err = fmt.Errorf("package customization has no controller %q: name %s or %s", name, ControllerName, HealthControllerName)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// setup adds r to d.Manager: every event of its CRD recomputes the whole
// set, with one worker.
func (r *Reconciler[T]) setup(d controllerdeps.Deps) error {
	mgr := d.Manager
	r.client, r.mapper = mgr.GetClient(), mgr.GetRESTMapper()
	r.recorder = d.Recorder(r.rules.name)
	r.cache, r.applied = map[string]compiled{}, map[schema.GroupVersionKind]InUse{}
	return ctrl.NewControllerManagedBy(mgr).
		Named(r.rules.name).
		Watches(r.rules.newObject(), handler.EnqueueRequestsFromMapFunc(func(context.Context, client.Object) []reconcile.Request {
			return []reconcile.Request{everything}
		})).
		WithOptions(d.ControllerOptions(0)).
		Complete(r)
}
