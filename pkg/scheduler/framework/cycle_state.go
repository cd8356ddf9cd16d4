package framework

import (
	"cmp"
	"slices"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
)

// StateKey names a plugin's entry in the CycleState.
type StateKey string

type stateSlot struct {
	key  StateKey
	data any
}

// CycleState is the state of one scheduling cycle (one workload, one
// affinity term). PreFilter and PreScore plugins write what they compiled
// (selectors as ClusterSets, toleration verdicts, statuses to report) and
// Filter and Score read it for each cluster.
//
// Writes happen only in PreFilter and PreScore, which run on one goroutine;
// Filter and Score may run on several goroutines and only read (Fit
// aside). Entries are kept in a small slice rather than a map: a cycle has a
// handful of them and they are read once per cluster.
type CycleState struct {
	snap     *Snapshot
	term     AffinityTerm
	slots    []stateSlot
	arena    []uint64
	held     ClusterSet
	previous []previousTarget
	request  *Resources
	fits     []int64
}

// previousTarget is a current target of the workload that is still in the
// fleet, by snapshot index.
type previousTarget struct {
	index    int32
	replicas int32
}

// NewCycleState returns the state of a cycle placing w over snap with the
// affinity term in force. The framework pools and reuses these; tests
// create them.
func NewCycleState(snap *Snapshot, w *Workload, term AffinityTerm) *CycleState {
	s := &CycleState{}
	s.reset(snap, w, term)
	return s
}

func (s *CycleState) reset(snap *Snapshot, w *Workload, term AffinityTerm) {
	s.snap, s.term, s.request = snap, term, &w.Request
	s.fits = resize(s.fits, snap.Len())
	for i := range s.fits {
		s.fits[i] = -1
	}
	clear(s.slots)
	s.slots = s.slots[:0]
	s.arena = s.arena[:0]
	s.previous = s.previous[:0]
	s.held = s.NewClusterSet()
	for _, t := range w.Previous {
		// Unscheduled targets are on their way out: they hold nothing the
		// scheduler should keep.
		if i, ok := snap.byName[t.Name]; ok && t.State != workv1alpha1.TargetUnscheduled {
			s.held.Add(int(i))
			s.previous = append(s.previous, previousTarget{index: i, replicas: t.Replicas})
		}
	}
	slices.SortFunc(s.previous, func(a, b previousTarget) int { return cmp.Compare(a.index, b.index) })
}

// Snapshot is the fleet the cycle runs against.
func (s *CycleState) Snapshot() *Snapshot { return s.snap }

// Term is the cluster affinity in force.
func (s *CycleState) Term() AffinityTerm { return s.term }

// Fit returns how many replicas of the workload fit on ci (see
// Resources.Fit). The resource filter, the capacity score and the
// candidates all need it, so it is computed once per cluster and cycle. It
// may be called concurrently for distinct clusters (the framework's
// parallel loops give each cluster to one goroutine).
func (s *CycleState) Fit(ci *ClusterInfo) int64 {
	n := s.fits[ci.index]
	if n < 0 {
		n, _ = ci.Fit(s.request)
		s.fits[ci.index] = n
	}
	return n
}

// Previous is the replicas the workload has on ci now (0 when none).
func (s *CycleState) Previous(ci *ClusterInfo) int32 {
	k, ok := slices.BinarySearchFunc(s.previous, int32(ci.index), func(p previousTarget, i int32) int { return cmp.Compare(p.index, i) })
	if !ok {
		return 0
	}
	return s.previous[k].replicas
}

// Held is the set of clusters currently holding the workload.
func (s *CycleState) Held() ClusterSet { return s.held }

// Write stores data under key, replacing an earlier entry.
func (s *CycleState) Write(key StateKey, data any) {
	for i := range s.slots {
		if s.slots[i].key == key {
			s.slots[i].data = data
			return
		}
	}
	s.slots = append(s.slots, stateSlot{key, data})
}

// Read returns the data stored under key, or nil.
func (s *CycleState) Read(key StateKey) any {
	for i := range s.slots {
		if s.slots[i].key == key {
			return s.slots[i].data
		}
	}
	return nil
}

// NewClusterSet returns an empty set sized for the snapshot. Sets are carved
// from a per-cycle arena, so compiling selectors allocates nothing once the
// pooled state has warmed up; they are valid until the cycle ends.
func (s *CycleState) NewClusterSet() ClusterSet {
	n := wordsFor(s.snap.Len())
	if len(s.arena)+n > cap(s.arena) {
		// Sets already handed out keep pointing into the old array.
		s.arena = make([]uint64, 0, max(2*cap(s.arena), 8*n))
	}
	start := len(s.arena)
	s.arena = s.arena[:start+n]
	set := ClusterSet(s.arena[start : start+n : start+n])
	clear(set)
	return set
}

// AllClusters returns a set holding every cluster of the snapshot.
func (s *CycleState) AllClusters() ClusterSet {
	set := s.NewClusterSet()
	set.Fill(s.snap.Len())
	return set
}
