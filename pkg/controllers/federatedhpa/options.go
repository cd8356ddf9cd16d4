package federatedhpa

import "time"

// Defaults of Options.
const (
	DefaultWorkers      = 2
	DefaultSyncPeriod   = 15 * time.Second
	DefaultMetricMaxAge = 2 * time.Minute
)

// Options configure the controller. Zero values take the defaults.
type Options struct {
	// Workers is the concurrency (default 2).
	Workers int
	// SyncPeriod is how often each FederatedHPA is computed (default 15 s,
	// a HorizontalPodAutoscaler's; flag --federatedhpa-sync-period).
	SyncPeriod time.Duration
	// Tolerance is how far the usage ratio may be from 1 before the count
	// changes (default 0.1), unless behavior sets its own.
	Tolerance float64
	// DownscaleWindow is the scale-down stabilization window of a
	// behavior that sets none (default 300 s).
	DownscaleWindow time.Duration
	// MetricMaxAge: a member whose newest sample is older is left out as
	// stale (default 2 m).
	MetricMaxAge time.Duration
	// Members reads the members; nil reads Push members through the
	// member clients (NewMembers) and Pull members through the samples
	// their agents report (NewPullMembers).
	Members Members
	// Now is the clock; nil means the controller's (controllerdeps.Deps.Clock,
	// the real clock by default). Tests set it.
	Now func() time.Time
}

func (o Options) withDefaults() Options {
	if o.Workers <= 0 {
		o.Workers = DefaultWorkers
	}
	if o.SyncPeriod <= 0 {
		o.SyncPeriod = DefaultSyncPeriod
	}
	if o.Tolerance <= 0 {
		o.Tolerance = DefaultTolerance
	}
	if o.DownscaleWindow <= 0 {
		o.DownscaleWindow = DefaultDownscaleWindow
	}
	if o.MetricMaxAge <= 0 {
		o.MetricMaxAge = DefaultMetricMaxAge
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}
