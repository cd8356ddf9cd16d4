package controller

import (
	"golang.org/x/time/rate"
)

// Options configure the rescheduler controller. Zero values take the
// defaults.
type Options struct {
	// Detection says which pod states are failures; nil means
	// DefaultDetection().
	Detection *Detection
	// ReschedulesPerSecond and Burst bound how fast pods are deleted or
	// recreated, across all workloads (default 1/s, burst 10). A node
	// turning bad can fail hundreds of pods at once; moving them all in
	// one go would be a self-inflicted outage.
	ReschedulesPerSecond float64
	Burst                int
	// Workers is how many pods are handled in parallel (default 2).
	Workers int
}

func (o Options) withDefaults() Options {
	if o.Detection == nil {
		d := DefaultDetection()
		o.Detection = &d
	}
	if o.ReschedulesPerSecond <= 0 {
		o.ReschedulesPerSecond = 1
	}
	if o.Burst <= 0 {
		o.Burst = 10
	}
	if o.Workers <= 0 {
		o.Workers = 2
	}
	return o
}

func (o Options) limiter() *rate.Limiter {
	return rate.NewLimiter(rate.Limit(o.ReschedulesPerSecond), o.Burst)
}
