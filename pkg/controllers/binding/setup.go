package binding

import (
	"github.com/shepherd-io/shepherd/pkg/controllerdeps"
	"github.com/shepherd-io/shepherd/pkg/controllers/internal/bindingutil"
)

// Setup adds the binding controllers of both binding kinds
// ("binding-<kind>").
func Setup(d controllerdeps.Deps, opts Options) error {
	d = d.WithDefaults()
	opts = opts.withDefaults()
	if err := newReconciler(d, bindingutil.ResourceBindings(), opts).setup(d); err != nil {
		return err
	}
	return newReconciler(d, bindingutil.ClusterResourceBindings(), opts).setup(d)
}
