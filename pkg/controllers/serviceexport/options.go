package serviceexport

// ControllerName names the controller in --controllers, logs, metrics and
// events.
const ControllerName = "service-export"

// Options configure the controller. Zero values take the defaults.
type Options struct {
	// Workers reconcile that many members at once (default 2).
	Workers int
}

func (o Options) withDefaults() Options {
	if o.Workers <= 0 {
		o.Workers = 2
	}
	return o
}
