// Package scheduler is Shepherd's scheduling entry point: it runs a
// framework profile (filter, score, normalize) over a fleet snapshot, hands
// the feasible clusters to package core (group, select, assign), tries the
// placement's fallback affinity terms in order, and explains the outcome for
// every cluster.
package scheduler

import (
	"context"
	"errors"
	"fmt"
	"slices"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/scheduler/core"
	"github.com/shepherd-io/shepherd/pkg/scheduler/framework"
	"github.com/shepherd-io/shepherd/pkg/scheduler/plugins/resourcefit"
)

// Scheduler places workloads with one profile. It is safe for concurrent use.
type Scheduler struct {
	fw      *framework.Framework
	filters []string
	// Limits refuse placements too large for the fleet (none when zero).
	// Set before the first Schedule.
	Limits Limits
}

// New builds a scheduler running profile with the in-tree plugins plus the
// out-of-tree ones (may be nil).
func New(profile framework.Profile, outOfTree framework.Registry) (*Scheduler, error) {
	reg := InTreeRegistry()
	if err := reg.Merge(outOfTree); err != nil {
		return nil, err
	}
	fw, err := framework.New(reg, profile)
	if err != nil {
		return nil, err
	}
	return &Scheduler{fw: fw, filters: slices.Clone(profile.Filters)}, nil
}

// NewDefault builds a scheduler running DefaultProfile.
func NewDefault() *Scheduler {
	s, err := New(DefaultProfile(), nil)
	if err != nil {
		panic(fmt.Sprintf("default profile: %v", err)) // a bug in this package
	}
	return s
}

// Profile returns the profile the scheduler runs.
func (s *Scheduler) Profile() framework.Profile { return s.fw.Profile() }

// Schedule places w on snap.
//
// With fallback affinity terms, a Steady cycle starts from the term in force
// (w.ObservedAffinityName) and a Fresh one from the first; the next term is
// tried only when the workload cannot be placed with the current one, and
// Result.AffinityName says which term placed it.
//
// When no term places the workload, Schedule returns an
// *UnschedulableError together with the Result of the first term tried, so
// its explanations say what went wrong there. Any other error means the
// scheduler itself failed (a plugin error, a cancelled context).
func (s *Scheduler) Schedule(ctx context.Context, snap *framework.Snapshot, w *framework.Workload) (*Result, error) {
	terms := framework.AffinityTerms(w.Placement)
	start := 0
	if w.Mode == core.Steady && w.ObservedAffinityName != "" {
		for i, t := range terms {
			if t.Name == w.ObservedAffinityName {
				start = i
			}
		}
	}
	if err := s.Limits.checkWorkload(snap, w); err != nil {
		return nil, err
	}
	notDivided := w.NotDivided
	var (
		first    *Result
		failures []*FitError
	)
	for _, term := range terms[start:] {
		res, fit, err := s.scheduleTerm(ctx, snap, w, term)
		if err != nil {
			first.Release()
			return nil, err
		}
		if fit == nil {
			first.Release()
			res.NotDivided = notDivided
			if err := s.Limits.checkTargets(snap, w, term.Name, res.Targets); err != nil {
				// Over the limit under this term means over it under any
				// other: every term divides the same replicas.
				return res, err
			}
			return res, nil
		}
		if first == nil {
			first = res
		} else {
			res.Release()
		}
		failures = append(failures, fit)
	}
	return first, &UnschedulableError{Failures: failures}
}

// scheduleTerm runs one cycle; a non-nil FitError means the workload does
// not fit under this term.
func (s *Scheduler) scheduleTerm(ctx context.Context, snap *framework.Snapshot, w *framework.Workload, term framework.AffinityTerm) (*Result, *FitError, error) {
	cycle, err := s.fw.Run(ctx, snap, w, term)
	if err != nil {
		return nil, nil, fmt.Errorf("scheduling %s/%s: %w", w.Namespace, w.Name, err)
	}
	res := &Result{AffinityName: term.Name, snap: snap, request: &w.Request, cycle: cycle}
	if len(cycle.Feasible) == 0 {
		fe := newFitError(snap, cycle, nil, s.filters)
		fe.Room = roomOf(snap, rejectedBy(cycle, resourcefit.Name), &w.Request)
		return res, fe, nil
	}
	if w.DivideComponents {
		fe, err := s.scheduleDivided(snap, cycle, w, res)
		if err != nil {
			res.Release()
			return nil, nil, err
		}
		return res, fe, nil
	}
	out, err := core.Schedule(cycle.Candidates, core.Request{Replicas: w.Replicas, Placement: w.Placement, Mode: w.Mode, TieSeed: w.UID})
	var ue *core.UnschedulableError
	if errors.As(err, &ue) {
		res.failure = ue
		fe := newFitError(snap, cycle, ue, s.filters)
		if ue.Constraint == "replicas" {
			fe.Room = roomOf(snap, cycle.Feasible, &w.Request)
		}
		return res, fe, nil
	}
	if err != nil {
		res.Release()
		return nil, nil, fmt.Errorf("scheduling %s/%s: %w", w.Namespace, w.Name, err)
	}
	res.Targets, res.notSelected = withComponents(out.Targets, w), out.NotSelected
	return res, nil, nil
}

// withComponents records on each target the components of a workload made
// of several pod templates, all of each one's replicas: such a workload is
// placed whole (GangFit passed every selected cluster for all of it).
// Targets of any other workload are left as they are, without the field,
// so that their bindings do not change.
func withComponents(targets []workv1alpha1.TargetCluster, w *framework.Workload) []workv1alpha1.TargetCluster {
	if len(w.Components) == 0 {
		return targets
	}
	for i := range targets {
		targets[i].Components = w.TargetComponents()
	}
	return targets
}
