package simmember

import (
	"errors"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
)

// withoutDuplicateMetricsErrors drops errors that only say a metric was
// registered already. The replicaset controller registers its metrics on
// construction without the sync.Once the other controllers use and logs the
// duplicate registration of every member after the first in a process as an
// error, which is harmless: all members share the first registration.
func withoutDuplicateMetricsErrors(l logr.Logger) logr.Logger {
	if l.GetSink() == nil {
		return l
	}
	return l.WithSink(duplicateMetricsFilter{l.GetSink()}) // keeps l's verbosity
}

type duplicateMetricsFilter struct{ logr.LogSink }

func (s duplicateMetricsFilter) Error(err error, msg string, kv ...any) {
	if dup := (prometheus.AlreadyRegisteredError{}); errors.As(err, &dup) {
		return
	}
	s.LogSink.Error(err, msg, kv...)
}

func (s duplicateMetricsFilter) WithValues(kv ...any) logr.LogSink {
	return duplicateMetricsFilter{s.LogSink.WithValues(kv...)}
}

func (s duplicateMetricsFilter) WithName(name string) logr.LogSink {
	return duplicateMetricsFilter{s.LogSink.WithName(name)}
}
