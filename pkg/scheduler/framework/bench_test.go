package framework_test

import (
	"context"
	"testing"

	"github.com/shepherd-io/shepherd/pkg/scenario/scenariotest"
	"github.com/shepherd-io/shepherd/pkg/scheduler"
	"github.com/shepherd-io/shepherd/pkg/scheduler/framework"
)

// BenchmarkRun measures the framework alone (filter, score, candidates) on
// the largest fleet, without the selection and assignment of package core.
func BenchmarkRun(b *testing.B) {
	s := scenariotest.Load(b, scenariotest.Fleet5000)
	fw, err := framework.New(scheduler.InTreeRegistry(), scheduler.DefaultProfile())
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		w := s.Workloads[i%len(s.Workloads)]
		c, err := fw.Run(ctx, s.Snapshot, w, framework.AffinityTerms(w.Placement)[0])
		if err != nil {
			b.Fatal(err)
		}
		c.Release()
	}
}
