package scenario_test

import (
	"testing"

	"github.com/shepherd-io/shepherd/pkg/scenario/scenariotest"
)

func TestLoadFleet20(t *testing.T) {
	s := scenariotest.Load(t, scenariotest.Fleet20)
	if s.Snapshot.Len() != 20 || len(s.Workloads) != 200 || len(s.Unmatched) != 0 {
		t.Fatalf("got %d clusters, %d workloads, %d unmatched", s.Snapshot.Len(), len(s.Workloads), len(s.Unmatched))
	}
	for _, w := range s.Workloads {
		if w.Placement == nil || w.Placement.ReplicaScheduling == nil || w.Request.IsZero() {
			t.Fatalf("%s/%s: incomplete workload %+v", w.Namespace, w.Name, w)
		}
	}
}
