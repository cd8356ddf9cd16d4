package failover

import (
	"time"

	"golang.org/x/time/rate"
)

// Defaults of Options.
const (
	DefaultWorkers              = 4
	DefaultClusterEvictionRate  = 10.0
	DefaultClusterEvictionBurst = 20
)

// Options configure the controller. Zero values take the defaults.
type Options struct {
	// Workers is the concurrency of each binding kind's controller (default 4).
	Workers int
	// ClusterEvictionRate bounds evictions caused by NoExecute taints, in
	// bindings per second over the whole hub (default 10), so that a
	// failed cluster's workloads reach the other clusters in waves.
	ClusterEvictionRate float64
	// ClusterEvictionBurst is how many such evictions may happen at once
	// (default 20).
	ClusterEvictionBurst int
	// Now is the clock; nil means time.Now. Tests set it.
	Now func() time.Time
}

func (o Options) withDefaults() Options {
	if o.Workers <= 0 {
		o.Workers = DefaultWorkers
	}
	if o.ClusterEvictionRate <= 0 {
		o.ClusterEvictionRate = DefaultClusterEvictionRate
	}
	if o.ClusterEvictionBurst <= 0 {
		o.ClusterEvictionBurst = DefaultClusterEvictionBurst
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

func (o Options) limiter() *rate.Limiter {
	return rate.NewLimiter(rate.Limit(o.ClusterEvictionRate), o.ClusterEvictionBurst)
}
