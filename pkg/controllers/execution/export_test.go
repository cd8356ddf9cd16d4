package execution

// SetBeforeCreate lets tests act in the window between reading that a
// member object is missing and creating it.
func SetBeforeCreate(r *Reconciler, f func(name string)) { r.beforeCreate = f }
