package fleetbench

import (
	"github.com/shepherd-io/shepherd/internal/dev/localfleet"
	"github.com/shepherd-io/shepherd/internal/dev/simmember"
)

// on is the fleet a run goes on, and what of it is the run's own. Run,
// Soak and RunRollout start a fleet for the run alone; the package's
// tests share one fleet between their runs (see shared_test.go), each
// with its own namespace and its own simulated clusters, so that no run
// places on another's.
type on struct {
	fleet *localfleet.Fleet
	// members are the fleet's members, simulated Pull clusters aside.
	members simmember.FleetSpec
	// ns holds the run's templates and policies on the hub.
	ns string
	// simPrefix names the run's simulated Pull clusters (simOptions.prefix).
	simPrefix string
}

// runLabel on a run's simulated clusters is the run's namespace: a run
// whose policies would place on any cluster (the soak's) keeps to its own.
const runLabel = "bench.shepherd.io/run"
