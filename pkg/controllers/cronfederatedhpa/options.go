package cronfederatedhpa

import "time"

// DefaultWorkers is the controller's default concurrency.
const DefaultWorkers = 2

// Options configure the controller. Zero values take the defaults.
type Options struct {
	// Workers is the concurrency (default 2).
	Workers int
	// Location is the time zone of rules without timeZone (default the
	// process's, time.Local).
	Location *time.Location
	// Now is the clock; nil means time.Now. Tests set it.
	Now func() time.Time
}

func (o Options) withDefaults() Options {
	if o.Workers <= 0 {
		o.Workers = DefaultWorkers
	}
	if o.Location == nil {
		o.Location = time.Local
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}
