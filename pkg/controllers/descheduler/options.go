package descheduler

import (
	"time"

	"golang.org/x/time/rate"
)

// Defaults of Options.
const (
	DefaultWorkers   = 2
	DefaultThreshold = 5 * time.Minute
	DefaultRate      = 5.0
	DefaultBurst     = 10
)

// Options configure the controller. Zero values take the defaults.
type Options struct {
	// Workers is the concurrency of each binding kind's controller (default 2).
	Workers int
	// Threshold is how long replicas stay unschedulable in a member before
	// they are moved, unless the policy sets its own (default 5m, flag
	// --unschedulable-threshold).
	Threshold time.Duration
	// Rate bounds moves over the whole hub, in bindings per second
	// (default 5), Burst how many may move at once (default 10).
	Rate  float64
	Burst int
	// Now is the clock; nil means time.Now. Tests set it.
	Now func() time.Time
}

func (o Options) withDefaults() Options {
	if o.Workers <= 0 {
		o.Workers = DefaultWorkers
	}
	if o.Threshold <= 0 {
		o.Threshold = DefaultThreshold
	}
	if o.Rate <= 0 {
		o.Rate = DefaultRate
	}
	if o.Burst <= 0 {
		o.Burst = DefaultBurst
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

func (o Options) limiter() *rate.Limiter { return rate.NewLimiter(rate.Limit(o.Rate), o.Burst) }
