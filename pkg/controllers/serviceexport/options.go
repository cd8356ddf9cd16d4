package serviceexport

// ControllerName names the controller in --controllers, logs, metrics and
// events.
const ControllerName = "service-export"

// DefaultWorkers is Options.Workers when unset. A member's reconcile
// writes its imports one at a time (at a thousand imports, a first pass is
// two thousand writes to that member), so members are done side by side:
// with two workers, a ClusterSet of 20 members completed its imports two
// members at a time, each waiting on its own API server's answers.
const DefaultWorkers = 8

// Options configure the controller. Zero values take the defaults.
type Options struct {
	// Workers reconcile that many members at once (default
	// DefaultWorkers); one member is never reconciled twice at once.
	Workers int
}

func (o Options) withDefaults() Options {
	if o.Workers <= 0 {
		o.Workers = DefaultWorkers
	}
	return o
}
