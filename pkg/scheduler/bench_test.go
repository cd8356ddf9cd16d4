package scheduler

import (
	"context"
	"testing"

	"github.com/shepherd-io/shepherd/pkg/scenario/scenariotest"
)

func BenchmarkScheduleFleet20(b *testing.B)   { benchmarkFleet(b, scenariotest.Fleet20) }
func BenchmarkScheduleFleet1000(b *testing.B) { benchmarkFleet(b, scenariotest.Fleet1000) }
func BenchmarkScheduleFleet5000(b *testing.B) { benchmarkFleet(b, scenariotest.Fleet5000) }

// benchmarkFleet schedules the scenario's workloads one after the other on
// one goroutine against the unchanged fleet; an op is one workload.
func benchmarkFleet(b *testing.B, file string) {
	s := scenariotest.Load(b, file)
	sched := NewDefault()
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		w := s.Workloads[i%len(s.Workloads)]
		res, err := sched.Schedule(ctx, s.Snapshot, w)
		if _, unschedulable := err.(*UnschedulableError); err != nil && !unschedulable {
			b.Fatal(err)
		}
		res.Release()
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "workloads/s")
}
