package scheduler

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/placement"
	"github.com/shepherd-io/shepherd/pkg/scenario/scenariotest"
	"github.com/shepherd-io/shepherd/pkg/scheduler/framework"
	"github.com/shepherd-io/shepherd/pkg/scheduler/plugins/apienablement"
	"github.com/shepherd-io/shepherd/pkg/scheduler/plugins/clusteraffinity"
	"github.com/shepherd-io/shepherd/pkg/scheduler/plugins/spreadconstraint"
	"github.com/shepherd-io/shepherd/pkg/scheduler/plugins/tainttoleration"
)

// outcome is everything observable of one Schedule call.
type outcome struct {
	Result       *Result
	Targets      []workv1alpha1.TargetCluster
	AffinityName string
	Explanations []Explanation
	Err          string
}

func run(t testing.TB, s *Scheduler, snap *framework.Snapshot, w *framework.Workload) outcome {
	t.Helper()
	res, err := s.Schedule(context.Background(), snap, w)
	var ue *UnschedulableError
	if err != nil && !errors.As(err, &ue) {
		t.Fatalf("%s/%s: %v", w.Namespace, w.Name, err)
	}
	o := outcome{Result: res, Targets: res.Targets, AffinityName: res.AffinityName, Explanations: res.Explanations()}
	if err != nil {
		o.Err = err.Error()
	}
	return o
}

func (o outcome) equal(p outcome) bool {
	return reflect.DeepEqual(o.Targets, p.Targets) && o.AffinityName == p.AffinityName &&
		reflect.DeepEqual(o.Explanations, p.Explanations) && o.Err == p.Err
}

// TestDeterministicFleet20 schedules the shared 20-cluster scenario twice,
// the second time from a shuffled cluster list, and wants the same output.
func TestDeterministicFleet20(t *testing.T) {
	s := scenariotest.Load(t, scenariotest.Fleet20)
	infos := make([]framework.ClusterInfo, s.Snapshot.Len())
	for i := range infos {
		infos[i] = *s.Snapshot.At(i)
	}
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(infos), func(i, j int) { infos[i], infos[j] = infos[j], infos[i] })
	shuffled := snapshot(t, infos...)
	sched := NewDefault()
	scheduled := 0
	for _, w := range s.Workloads {
		a, b, c := run(t, sched, s.Snapshot, w), run(t, sched, s.Snapshot, w), run(t, sched, shuffled, w)
		if !a.equal(b) || !a.equal(c) {
			t.Fatalf("%s/%s: outcomes differ:\n%+v\n%+v\n%+v", w.Namespace, w.Name, a, b, c)
		}
		if a.Err == "" {
			scheduled++
		}
	}
	if scheduled == 0 {
		t.Error("no workload of the scenario was scheduled")
	}
}

// TestDeterministicParallel checks a fleet large enough for the framework
// to split work across goroutines gives the same result each time.
func TestDeterministicParallel(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var clusters []framework.ClusterInfo
	for range 30 {
		clusters = append(clusters, randomFleet(r)...)
	}
	for i := range clusters {
		clusters[i].Name = fmt.Sprintf("c%04d", i)
	}
	snap := snapshot(t, clusters...)
	names := make([]string, len(clusters))
	for i := range clusters {
		names[i] = clusters[i].Name
	}
	sched := NewDefault()
	for i := range 50 {
		w := deployment(fmt.Sprintf("w%d", i), int32(r.IntN(20)), randomPlacement(r, names))
		if a, b := run(t, sched, snap, w), run(t, sched, snap, w); !a.equal(b) {
			t.Fatalf("workload %d: outcomes differ", i)
		}
	}
}

// FuzzSchedule schedules random placements on random fleets: every target
// must pass every filter (checked cluster by cluster, apart from the
// framework's fleet-wide verdicts), replicas must add up, and the same input
// must give the same output.
func FuzzSchedule(f *testing.F) {
	for seed := range uint64(16) {
		f.Add(seed, seed*7+1)
	}
	sched := NewDefault()
	filters := []framework.FilterPlugin{}
	for _, mk := range []framework.Factory{apienablement.New, clusteraffinity.New, tainttoleration.New, spreadconstraint.New} {
		p, _ := mk(nil)
		filters = append(filters, p.(framework.FilterPlugin))
	}
	f.Fuzz(func(t *testing.T, s1, s2 uint64) {
		r := rand.New(rand.NewPCG(s1, s2))
		clusters := randomFleet(r)
		snap := snapshot(t, clusters...)
		names := make([]string, len(clusters))
		for i := range clusters {
			names[i] = clusters[i].Name
		}
		w := deployment("w", int32(r.IntN(30)), randomPlacement(r, names))
		a := run(t, sched, snap, w)
		if b := run(t, sched, snap, w); !a.equal(b) {
			t.Fatalf("outcomes differ:\n%+v\n%+v", a, b)
		}
		if a.Err != "" {
			return
		}
		term := framework.AffinityTerm{}
		for _, tt := range framework.AffinityTerms(w.Placement) {
			if tt.Name == a.AffinityName {
				term = tt
			}
		}
		var sum int32
		for _, tc := range a.Result.Targets {
			i, ok := snap.Index(tc.Name)
			if !ok {
				t.Fatalf("target %s is not in the fleet", tc.Name)
			}
			if e := a.Result.Explain(i); e.FilteredBy != "" || !e.Selected {
				t.Fatalf("target %s explained as %+v", tc.Name, e)
			}
			state := framework.NewCycleState(snap, w, term)
			for _, p := range filters {
				if _, st := p.(framework.PreFilterPlugin).PreFilter(context.Background(), state, w); st.IsSkip() {
					continue
				}
				if st := p.Filter(context.Background(), state, w, snap.At(i)); !st.IsSuccess() {
					t.Fatalf("target %s fails %s: %s", tc.Name, p.Name(), st.Message())
				}
			}
			sum += tc.Replicas
			if placement.IsDuplicated(w.Placement) && tc.Replicas != w.Replicas {
				t.Fatalf("duplicated target %s has %d replicas, want %d", tc.Name, tc.Replicas, w.Replicas)
			}
		}
		if !placement.IsDuplicated(w.Placement) && sum != w.Replicas {
			t.Fatalf("divided targets hold %d replicas, want %d", sum, w.Replicas)
		}
	})
}
