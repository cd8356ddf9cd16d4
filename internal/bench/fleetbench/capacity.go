package fleetbench

import (
	"context"
	"fmt"
	"slices"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/internal/dev/localfleet"
	"github.com/shepherd-io/shepherd/internal/dev/simmember"
	"github.com/shepherd-io/shepherd/pkg/scheme"
)

// Finite capacity (Options.Capacity): every replica asks for
// capacityReplicaMilliCPU and each member has capacityNodes nodes sized so
// that the fleet holds about Capacity of all the replicas. The hub must
// place what fits and call the rest Unschedulable; the members' own
// schedulers then say whether what the hub placed really fits.
const (
	capacityReplicaMilliCPU = 100
	capacityNodes           = 2
)

// CapacityReport is what a finite-capacity run found once the members
// settled: the hub's decisions against what the members could run.
type CapacityReport struct {
	// Fraction is Options.Capacity: the share of all replicas the fleet
	// was sized to hold.
	Fraction float64 `json:"fraction"`
	// RoomReplicas is how many replicas the members' empty nodes hold,
	// counted node by node.
	RoomReplicas int `json:"roomReplicas"`
	// ScheduledWorkloads and UnschedulableWorkloads count the bindings by
	// their Scheduled condition.
	ScheduledWorkloads     int `json:"scheduledWorkloads"`
	UnschedulableWorkloads int `json:"unschedulableWorkloads"`
	// PlacedReplicas is what the hub assigned to clusters.
	PlacedReplicas int `json:"placedReplicas"`
	// ReplicasBeyondRoom sums, per cluster, the replicas the hub assigned
	// beyond what that cluster's nodes hold: 0 when the hub never
	// overcommits a member.
	ReplicasBeyondRoom int `json:"replicasBeyondRoom"`
	// RunningPods and PendingPods are the members' pods of the workloads
	// once every member Deployment had all its pods and the members'
	// schedulers had tried each: Pending pods are ones no node could take.
	// The goal is 0 Pending.
	RunningPods int `json:"runningPods"`
	PendingPods int `json:"pendingPods"`
	// SettleSeconds is from every Work applied until the members' pods
	// settled.
	SettleSeconds float64 `json:"settleSeconds"`
}

// capacityFleet sizes n members so that together they hold about fraction
// of deployments x replicas replicas: capacityNodes nodes each, their CPU a
// whole number of replicas (a replica never spans nodes), and enough pod
// slots that CPU is what runs out.
func capacityFleet(n, deployments int, replicas int32, fraction float64) simmember.FleetSpec {
	total := float64(deployments) * float64(replicas) * fraction
	perNode := max(1, int(total/float64(n*capacityNodes)))
	f := simmember.DefaultFleet(n)
	for i := range f.Members {
		f.Members[i].Nodes = capacityNodes
		f.Members[i].NodeCPU = *resource.NewMilliQuantity(int64(perNode*capacityReplicaMilliCPU), resource.DecimalSI)
		f.Members[i].NodePods = max(simmember.DefaultNodePods, perNode+10)
	}
	return f
}

// roomOf is how many replicas of capacityReplicaMilliCPU a member's empty
// nodes hold, node by node.
func roomOf(m simmember.MemberSpec) int {
	return m.Nodes * int(m.NodeCPU.MilliValue()/capacityReplicaMilliCPU)
}

// capacityPolicy divides by dynamic weights (available replicas) over two
// clusters: what places a workload is the room the scheduler sees.
func capacityPolicy(ns string, p int) *policyv1alpha1.PropagationPolicy {
	pol := policy(ns, p)
	pol.Spec.Placement.ReplicaScheduling.WeightPreference = &policyv1alpha1.ClusterPreferences{
		DynamicWeight: policyv1alpha1.DynamicWeightByAvailableReplicas,
	}
	return pol
}

// capacityDeployment asks for capacityReplicaMilliCPU per replica.
func capacityDeployment(ns string, d, p int, replicas int32) *appsv1.Deployment {
	dep := deployment(ns, d, p, replicas)
	dep.Spec.Template.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU] = *resource.NewMilliQuantity(capacityReplicaMilliCPU, resource.DecimalSI)
	return dep
}

// allDecided reports whether every binding of ns has a Scheduled
// condition: True (placed) or False (Unschedulable) both end the wait.
func allDecided(ctx context.Context, hub client.Reader, ns string, want int) (bool, error) {
	var rbs workv1alpha1.ResourceBindingList
	if err := hub.List(ctx, &rbs, client.InNamespace(ns)); err != nil {
		return false, err
	}
	n := 0
	for i := range rbs.Items {
		if meta.FindStatusCondition(rbs.Items[i].Status.Conditions, workv1alpha1.ConditionScheduled) != nil {
			n++
		}
	}
	return n == want, nil
}

// hubPlacements counts the bindings of ns by their Scheduled condition and
// the replicas assigned to each cluster.
func hubPlacements(ctx context.Context, hub client.Reader, ns string, rep *CapacityReport) (map[string]int, error) {
	var rbs workv1alpha1.ResourceBindingList
	if err := hub.List(ctx, &rbs, client.InNamespace(ns)); err != nil {
		return nil, err
	}
	placed := map[string]int{}
	for i := range rbs.Items {
		b := &rbs.Items[i]
		if meta.IsStatusConditionTrue(b.Status.Conditions, workv1alpha1.ConditionScheduled) {
			rep.ScheduledWorkloads++
		} else {
			rep.UnschedulableWorkloads++
		}
		for _, t := range b.Spec.Clusters {
			placed[t.Name] += int(t.Replicas)
			rep.PlacedReplicas += int(t.Replicas)
		}
	}
	return placed, nil
}

// beyondRoom sums, over the members, the replicas placed beyond their room.
func beyondRoom(fleet simmember.FleetSpec, placed map[string]int) int {
	n := 0
	for _, m := range fleet.Members {
		n += max(0, placed[m.Name]-roomOf(m))
	}
	return n
}

// memberPods is one member's pods of the workloads: how many its
// Deployments want, how many exist, and how many have been tried by its
// scheduler (bound to a node, or marked unschedulable).
type memberPods struct {
	want, exist, untried, running, pending int
}

func (p memberPods) settled() bool { return p.exist == p.want && p.untried == 0 }

func countMemberPods(ctx context.Context, c client.Reader, ns string) (memberPods, error) {
	var p memberPods
	var deps appsv1.DeploymentList
	if err := c.List(ctx, &deps, client.InNamespace(ns)); err != nil {
		return p, err
	}
	for i := range deps.Items {
		if r := deps.Items[i].Spec.Replicas; r != nil {
			p.want += int(*r)
		}
	}
	var pods corev1.PodList
	if err := c.List(ctx, &pods, client.InNamespace(ns)); err != nil {
		return p, err
	}
	for i := range pods.Items {
		pod := &pods.Items[i]
		if pod.DeletionTimestamp != nil {
			continue
		}
		p.exist++
		switch {
		case pod.Spec.NodeName != "":
			p.running++
		case slices.ContainsFunc(pod.Status.Conditions, func(c corev1.PodCondition) bool {
			return c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse
		}):
			p.pending++
		default:
			p.untried++
		}
	}
	return p, nil
}

// settleMembers waits until every member's Deployments have all their pods
// and its scheduler has tried each, the same counts twice in a row a
// second apart, and fills in the pods running and Pending.
func settleMembers(ctx context.Context, cfgs []*rest.Config, ns string, rep *CapacityReport) error {
	clients := make([]client.Client, len(cfgs))
	for i, cfg := range cfgs {
		c, err := client.New(cfg, client.Options{Scheme: scheme.Scheme})
		if err != nil {
			return err
		}
		clients[i] = c
	}
	var last []memberPods
	for {
		now := make([]memberPods, len(clients))
		done := true
		for i, c := range clients {
			p, err := countMemberPods(ctx, c, ns)
			if err != nil {
				return err
			}
			now[i] = p
			done = done && p.settled()
		}
		if done && slices.Equal(now, last) {
			for _, p := range now {
				rep.RunningPods += p.running
				rep.PendingPods += p.pending
			}
			return nil
		}
		last = now
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for the members' pods to settle: %w", ctx.Err())
		case <-time.After(time.Second):
		}
	}
}

// validCapacity refuses a Capacity the mode cannot run.
func validCapacity(o Options) error {
	switch {
	case o.Capacity == 0:
		return nil
	case o.Capacity < 0 || o.Capacity > 1:
		return fmt.Errorf("capacity %g: give the share of all replicas the members hold, above 0 and at most 1 (for example 0.6)", o.Capacity)
	case o.MembersAPIOnly:
		return fmt.Errorf("capacity needs members that schedule pods: drop members-api-only")
	case o.SimulatedPullClusters > 0:
		return fmt.Errorf("capacity needs members that schedule pods: simulated Pull clusters have none (set simulated-pull-clusters to 0)")
	}
	return nil
}

// capacityOutcome compares, once everything was applied, what the hub
// placed with what the members hold and run.
func capacityOutcome(ctx context.Context, f *localfleet.Fleet, fleet simmember.FleetSpec, ns string, fraction float64) (*CapacityReport, error) {
	rep := &CapacityReport{Fraction: fraction}
	for _, m := range fleet.Members {
		rep.RoomReplicas += roomOf(m)
	}
	hub, err := client.New(f.Hub.RestConfig(), client.Options{Scheme: scheme.Scheme})
	if err != nil {
		return nil, err
	}
	placed, err := hubPlacements(ctx, hub, ns, rep)
	if err != nil {
		return nil, err
	}
	rep.ReplicasBeyondRoom = beyondRoom(fleet, placed)
	cfgs := make([]*rest.Config, len(f.Members))
	for i, m := range f.Members {
		cfgs[i] = m.RestConfig()
	}
	start := time.Now()
	if err := settleMembers(ctx, cfgs, ns, rep); err != nil {
		return nil, err
	}
	rep.SettleSeconds = time.Since(start).Seconds()
	return rep, nil
}
