package execution

import "github.com/shepherd-io/shepherd/pkg/controllerdeps"

// SetupWithBeforeCreate is Setup with a hook that lets tests act in the
// window between reading that a member object is missing and creating it.
func SetupWithBeforeCreate(d controllerdeps.Deps, opts Options, f func(name string)) error {
	r := newReconciler(d, opts)
	r.beforeCreate = f
	return r.setup(d)
}
