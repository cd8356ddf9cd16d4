package orphans

import "time"

// ControllerName names the controller in --controllers, logs, metrics and
// events.
const ControllerName = "orphans"

// DefaultPeriod is Options.Period when unset.
const DefaultPeriod = 5 * time.Minute

// Options configure the sweep. Zero values take the defaults.
type Options struct {
	// Period between two sweeps of a member (default 5m, flag
	// --orphan-sweep-period). An orphan goes on its second sighting, so
	// within two periods of appearing.
	Period time.Duration
}

func (o Options) withDefaults() Options {
	if o.Period <= 0 {
		o.Period = DefaultPeriod
	}
	return o
}
