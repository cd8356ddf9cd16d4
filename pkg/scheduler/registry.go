package scheduler

import (
	"github.com/shepherd-io/shepherd/pkg/scheduler/framework"
	"github.com/shepherd-io/shepherd/pkg/scheduler/plugins/apienablement"
	"github.com/shepherd-io/shepherd/pkg/scheduler/plugins/capacity"
	"github.com/shepherd-io/shepherd/pkg/scheduler/plugins/clusteraffinity"
	"github.com/shepherd-io/shepherd/pkg/scheduler/plugins/clustereviction"
	"github.com/shepherd-io/shepherd/pkg/scheduler/plugins/gangfit"
	"github.com/shepherd-io/shepherd/pkg/scheduler/plugins/locality"
	"github.com/shepherd-io/shepherd/pkg/scheduler/plugins/preferredaffinity"
	"github.com/shepherd-io/shepherd/pkg/scheduler/plugins/resourcefit"
	"github.com/shepherd-io/shepherd/pkg/scheduler/plugins/spreadconstraint"
	"github.com/shepherd-io/shepherd/pkg/scheduler/plugins/tainttoleration"
	"github.com/shepherd-io/shepherd/pkg/scheduler/plugins/workloadaffinity"
)

// DefaultProfileName is the name of the default profile, the
// schedulerName policies get by default.
const DefaultProfileName = "default-scheduler"

// InTreeRegistry returns a registry of Shepherd's own plugins.
func InTreeRegistry() framework.Registry {
	return framework.Registry{
		apienablement.Name:     apienablement.New,
		clusteraffinity.Name:   clusteraffinity.New,
		tainttoleration.Name:   tainttoleration.New,
		clustereviction.Name:   clustereviction.New,
		workloadaffinity.Name:  workloadaffinity.New,
		spreadconstraint.Name:  spreadconstraint.New,
		resourcefit.Name:       resourcefit.New,
		gangfit.Name:           gangfit.New,
		locality.Name:          locality.New,
		preferredaffinity.Name: preferredaffinity.New,
		capacity.Name:          capacity.New,
	}
}

// DefaultProfile is the profile Shepherd runs.
//
// Filters run cheapest and most selective first: the API check and the
// affinity are bit tests that drop most ineligible clusters, so the later
// filters (and the only one doing arithmetic, ResourceFit) see fewer.
// WorkloadAffinity runs before ResourceFit so that, when an affinity
// group's clusters are full, the other clusters are explained by the group
// and the group's own by their room. GangFit, beside it, is ResourceFit
// for workloads of several pod templates (which have no replicas, so
// ResourceFit skips them, and vice versa): each workload meets one of the
// two, and both run last for the same reason.
//
// Score weights (each plugin scores 0..100):
//   - Locality 4: a cluster holding the workload scores 400, more than any
//     cluster can gain from the other two together (200 + 100), so a steady
//     workload never moves for a slightly better score elsewhere; moving costs
//     a rollout and only a reschedule asks for it.
//   - PreferredAffinity 2: an explicit user preference (200) outweighs the
//     capacity heuristic (100).
//   - Capacity 1: among otherwise equal clusters, prefer more room.
func DefaultProfile() framework.Profile {
	return framework.Profile{
		Name: DefaultProfileName,
		Filters: []string{
			apienablement.Name,
			clusteraffinity.Name,
			tainttoleration.Name,
			clustereviction.Name,
			workloadaffinity.Name,
			spreadconstraint.Name,
			resourcefit.Name,
			gangfit.Name,
		},
		Scores: []framework.WeightedPlugin{
			{Name: locality.Name, Weight: 4},
			{Name: preferredaffinity.Name, Weight: 2},
			{Name: capacity.Name, Weight: 1},
		},
	}
}
