// Package fleetbench measures the whole propagation loop through real API
// servers: it starts a local fleet, creates Deployments under a few policies,
// and times how long until every binding is Scheduled and every Work applied.
// `shepherd bench e2e` runs it; numbers come from the clock, never from
// assertions in tests.
package fleetbench

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"time"

	"github.com/go-logr/logr"
	"golang.org/x/sync/errgroup"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	"github.com/shepherd-io/shepherd/internal/bench/hubbench"
	"github.com/shepherd-io/shepherd/internal/dev/localfleet"
	"github.com/shepherd-io/shepherd/internal/dev/simmember"
	"github.com/shepherd-io/shepherd/pkg/scheme"
)

// Options size the benchmark.
type Options struct {
	Members, Deployments, Policies int
	// ReplicasPerDeployment of every Deployment (default 2).
	ReplicasPerDeployment int32
	// DataDir for the fleet; empty uses a temporary directory removed afterwards.
	DataDir string
	// Timeout bounds the wait for the fleet to settle (default 10 min).
	Timeout time.Duration
	Logger  logr.Logger
	// MembersAPIOnly runs members without controllers, scheduler or pods:
	// the hub's pipeline measured as if members had machines of their own.
	MembersAPIOnly bool
	// CPUProfile, when set, receives a CPU profile of the measured part of
	// the run (from the first object created until every Work is applied).
	CPUProfile io.Writer
	// SimulatedPullClusters registers that many Pull clusters with no
	// member behind them, served by one simulator (see simulated.go):
	// the hub at the scale of a large fleet, on one machine.
	SimulatedPullClusters int
	// Capacity, between 0 and 1, runs members with finite room: nodes
	// sized so the fleet holds about that share of all the replicas, each
	// replica asking for 100m CPU, placed by dynamic weights. The run then
	// waits for every binding to be Scheduled or Unschedulable and for the
	// members' pods to settle, and reports the pods left Pending (see
	// CapacityReport). 0 (the default) gives members room for everything.
	Capacity float64
}

// Report is what one run measured.
type Report struct {
	Members int `json:"members"`
	// MembersAPIOnly: the members ran no controllers, scheduler or pods.
	MembersAPIOnly bool `json:"membersAPIOnly"`
	Deployments    int  `json:"deployments"`
	Policies       int  `json:"policies"`
	// FleetStartSeconds is how long the hub, members and controllers took to start.
	FleetStartSeconds float64 `json:"fleetStartSeconds"`
	// CreateSeconds is how long creating the policies and Deployments took.
	CreateSeconds float64 `json:"createSeconds"`
	// ScheduledSeconds is from the first Deployment created until every
	// binding is Scheduled; AppliedSeconds until every Work is Applied.
	ScheduledSeconds float64 `json:"scheduledSeconds"`
	AppliedSeconds   float64 `json:"appliedSeconds"`
	// BindingsScheduledPerSecond is bindings / ScheduledSeconds: the rate of
	// the detector and scheduler together through the real API server.
	BindingsScheduledPerSecond float64 `json:"bindingsScheduledPerSecond"`
	// Scheduler is the scheduler's own rate and latency (bindings from
	// created to Scheduled), Execution the execution controller's (Works
	// from created to Applied).
	Scheduler StageStats `json:"scheduler"`
	Execution StageStats `json:"execution"`
	Works     int        `json:"works"`
	// APIRequests counts API requests by verb and resource during the
	// measured part, most first, as apiserver_request_total counts them
	// for every API server in this process: the members' are included
	// (they share one metrics registry); the custom resources are the
	// hub's alone.
	APIRequests []RequestCount `json:"apiRequests"`
	// Reconciles counts each controller's reconciles during the measured
	// part, most first.
	Reconciles []ReconcileCount `json:"reconciles"`
	// WritesPerWorkload are the write requests (create, apply, patch,
	// update, delete) per Deployment during the measured part, by verb and
	// resource, most first: what one workload costs in writes. The members'
	// writes are included as in APIRequests (deployments, pods, ...); the
	// custom resources are the hub's alone.
	WritesPerWorkload []RequestRate `json:"writesPerWorkload"`
	// ProcessCPUSecondsPer1000Workloads is the CPU (user + system) this
	// process spent during the measured part, per 1,000 Deployments: the
	// hub, the controllers and the members together (with
	// --members-api-only the members' share is their API servers alone).
	ProcessCPUSecondsPer1000Workloads float64 `json:"processCPUSecondsPer1000Workloads"`
	// CPUByComponent splits the process's CPU, as a CPU profile of the
	// measured part sampled it, by the component that spent it: the hub's
	// own share (etcd and kube-apiserver) is HubCPUSecondsPer1000Workloads.
	CPUByComponent                []ComponentCPU `json:"cpuByComponent"`
	HubCPUSecondsPer1000Workloads float64        `json:"hubCPUSecondsPer1000Workloads"`
	// SimulatedPullClusters were registered and served by the simulator;
	// RegisterSeconds is how long registering them took (before the
	// measured part).
	SimulatedPullClusters int     `json:"simulatedPullClusters,omitempty"`
	RegisterSeconds       float64 `json:"registerSeconds,omitempty"`
	// NoOpWrites counts, by kind (ResourceBinding, Work), the writes seen
	// during the measured part that changed an object's resourceVersion
	// and nothing else: each cost the hub a write and told nobody
	// anything.
	NoOpWrites map[string]int `json:"noOpWrites"`
	// BindingWritesByPart are the bindings' updates per workload by the
	// parts they changed, as the watch saw them: which writer wrote how
	// often (creates not counted).
	BindingWritesByPart []PartRate `json:"bindingWritesByPart"`
	// StoredBytesPerWorkload is what the hub stored per workload during the
	// measured part, by kind: the JSON size of every version of its
	// bindings, Works, events and Deployments (the templates) the watch
	// saw, without managed fields. StoredBytesTotal sums them.
	StoredBytesPerWorkload map[string]float64 `json:"storedBytesPerWorkload"`
	StoredBytesTotal       float64            `json:"storedBytesPerWorkloadTotal"`
	// HubWritesPerWorkload counts those versions: the hub's writes of
	// bindings, Works, events and templates per workload (its other
	// writes, such as policies' status and Leases, are few).
	HubWritesPerWorkload float64 `json:"hubWritesPerWorkload"`
	// FloorMillisPerWrite is the hub's CPU per write of the floor (the
	// cheapest custom resource, see `shepherd bench hub`), measured in this
	// run's hub before the load, from the same profile label.
	FloorMillisPerWrite float64 `json:"floorMillisPerWrite"`
	// HubCPURatioToFloor is the hub's CPU per workload over what its writes
	// would cost at the floor's price: HubCPUSecondsPer1000Workloads /
	// (HubWritesPerWorkload x FloorMillisPerWrite).
	HubCPURatioToFloor float64 `json:"hubCPURatioToFloor"`
	// Memory is the process's memory once every Work was applied: the
	// hub, the controllers and whatever else runs in it (members, or the
	// simulator).
	Memory MemoryStats `json:"memory"`
	// Capacity is what a finite-capacity run (Options.Capacity) found.
	Capacity *CapacityReport `json:"capacity,omitempty"`
}

// creators is how many Deployments are created at once.
const creators = 16

// Run starts a fleet, loads it, measures, and stops it.
func Run(ctx context.Context, o Options) (*Report, error) {
	if err := o.check(); err != nil {
		return nil, err
	}
	if o.DataDir == "" {
		dir, err := os.MkdirTemp("", "shepherd-bench-e2e-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(dir)
		o.DataDir = dir
	}
	fleetSpec := o.fleet()
	started := time.Now()
	f, err := localfleet.Start(ctx, localfleet.Options{DataDir: o.DataDir, Fleet: fleetSpec, Logger: o.Logger, MembersAPIOnly: o.MembersAPIOnly})
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Stop() }()
	fleetStart := time.Since(started).Seconds()
	rep, err := run(ctx, o, on{fleet: f, members: fleetSpec, ns: "bench", simPrefix: simPrefix})
	if err != nil {
		return nil, err
	}
	rep.FleetStartSeconds = fleetStart
	return rep, nil
}

// check refuses sizes Run cannot run and sets the defaults.
func (o *Options) check() error {
	if o.Members+o.SimulatedPullClusters < 1 || o.Members < 0 || o.SimulatedPullClusters < 0 || o.Deployments < 1 || o.Policies < 1 {
		return fmt.Errorf("members (or simulated Pull clusters), deployments and policies must each be at least 1 (got %d+%d, %d, %d)", o.Members, o.SimulatedPullClusters, o.Deployments, o.Policies)
	}
	if err := validCapacity(*o); err != nil {
		return err
	}
	if o.ReplicasPerDeployment <= 0 {
		o.ReplicasPerDeployment = 2
	}
	if o.Timeout <= 0 {
		o.Timeout = 10 * time.Minute
	}
	return nil
}

// fleet is the members Run starts: two nodes each, or with Capacity nodes
// sized to hold that share of the replicas.
func (o Options) fleet() simmember.FleetSpec {
	if o.Capacity > 0 {
		return capacityFleet(o.Members, o.Deployments, o.ReplicasPerDeployment, o.Capacity)
	}
	f := simmember.DefaultFleet(o.Members)
	for i := range f.Members {
		f.Members[i].Nodes = 2
	}
	return f
}

// run loads the fleet of where and measures; o is checked.
func run(ctx context.Context, o Options, where on) (*Report, error) {
	newPolicy, newDeployment := policy, deployment
	if o.Capacity > 0 {
		newPolicy, newDeployment = capacityPolicy, capacityDeployment
	}
	rep := &Report{Members: o.Members, MembersAPIOnly: o.MembersAPIOnly, Deployments: o.Deployments, Policies: o.Policies, SimulatedPullClusters: o.SimulatedPullClusters}
	f, fleetSpec, ns := where.fleet, where.members, where.ns
	cfg := f.Hub.RestConfig()
	cfg.QPS, cfg.Burst = 1000, 2000
	if o.SimulatedPullClusters > 0 {
		registering := time.Now()
		if _, err := startSimulatedWith(ctx, cfg, o.SimulatedPullClusters, simOptions{prefix: where.simPrefix}, o.Logger.WithName("simulated-agents")); err != nil {
			return nil, err
		}
		rep.RegisterSeconds = time.Since(registering).Seconds()
	}
	hub, err := client.New(cfg, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		return nil, err
	}
	if err := hub.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		return nil, err
	}
	// Progress is read from watches: listing a thousand bindings and two
	// thousand Works ten times a second would load the hub more than the
	// controllers being measured.
	watchCtx, stopWatching := context.WithCancel(ctx)
	defer stopWatching()
	progress, err := watchProgress(watchCtx, cfg)
	if err != nil {
		return nil, err
	}
	// The fleet's own Works (the multi-cluster Service API every member
	// receives when it joins: CRDs whose installation loads each member's
	// API server for a while) are a one-off of joining, not part of the
	// pipeline measured: they settle before the clock starts.
	var memberNames []string
	for _, m := range fleetSpec.Members {
		memberNames = append(memberNames, m.Name)
	}
	if err := poll(ctx, func() (bool, error) { return fleetWorksApplied(ctx, hub, memberNames) }); err != nil {
		return nil, fmt.Errorf("waiting for the fleet's own Works to be applied: %w", err)
	}
	// The floor first, in this hub, before the load and its counters.
	floor, err := floorCost(ctx, cfg)
	if err != nil {
		return nil, err
	}
	rep.FloorMillisPerWrite = float64(floor.Microseconds()) / 1000
	before, err := apiRequests(ctx, cfg)
	if err != nil {
		return nil, err
	}
	reconcilesBefore, err := reconciles()
	if err != nil {
		return nil, err
	}
	// The CPU profile is always taken: its labels split the CPU by
	// component. --cpu-profile gets a copy.
	var prof bytes.Buffer
	if err := pprof.StartCPUProfile(&prof); err != nil {
		return nil, fmt.Errorf("starting the CPU profile: %w", err)
	}
	profiling := true
	defer func() {
		if profiling {
			pprof.StopCPUProfile()
		}
	}()
	storedBefore, versionsBefore := progress.storedBytes(), progress.versionCount()
	begin, cpuBegin := time.Now(), hubbench.ProcessCPU()
	for p := 0; p < o.Policies; p++ {
		if err := hub.Create(ctx, newPolicy(ns, p)); err != nil {
			return nil, fmt.Errorf("creating policy %d: %w", p, err)
		}
	}
	// Created by several clients at once, as a GitOps tool syncing a large
	// application would: one after another, creation itself would be what
	// is measured once the controllers load the hub.
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(creators)
	for d := 0; d < o.Deployments; d++ {
		g.Go(func() error {
			if err := hub.Create(gctx, newDeployment(ns, d, d%o.Policies, o.ReplicasPerDeployment)); err != nil {
				return fmt.Errorf("creating deployment %d: %w", d, err)
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	rep.CreateSeconds = time.Since(begin).Seconds()

	waitCtx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	scheduled := allScheduled
	if o.Capacity > 0 {
		scheduled = allDecided
	}
	if err := poll(waitCtx, func() (bool, error) { return scheduled(waitCtx, progress, ns, o.Deployments) }); err != nil {
		return nil, fmt.Errorf("waiting for every binding to be scheduled: %w", err)
	}
	rep.ScheduledSeconds = time.Since(begin).Seconds()
	rep.BindingsScheduledPerSecond = float64(o.Deployments) / rep.ScheduledSeconds
	var missing string
	if err := poll(waitCtx, func() (bool, error) {
		n, m, err := worksNotApplied(waitCtx, progress)
		rep.Works, missing = n, m
		return m == "" && err == nil, err
	}); err != nil {
		return nil, fmt.Errorf("waiting for every Work to be applied: %w; %s", err, missing)
	}
	rep.AppliedSeconds = time.Since(begin).Seconds()
	rep.Scheduler, rep.Execution = progress.stats(begin)
	rep.NoOpWrites = progress.noOpWrites()
	rep.BindingWritesByPart = progress.bindingWrites(o.Deployments)
	rep.StoredBytesPerWorkload = map[string]float64{}
	for kind, n := range progress.storedBytes() {
		per := float64(n-storedBefore[kind]) / float64(max(o.Deployments, 1))
		rep.StoredBytesPerWorkload[kind] = per
		rep.StoredBytesTotal += per
	}
	after, err := apiRequests(ctx, cfg)
	if err != nil {
		return nil, err
	}
	rep.APIRequests = requestDelta(before, after)
	rep.WritesPerWorkload = writesPer(rep.APIRequests, o.Deployments)
	rep.ProcessCPUSecondsPer1000Workloads = (hubbench.ProcessCPU() - cpuBegin).Seconds() * 1000 / float64(max(o.Deployments, 1))
	pprof.StopCPUProfile()
	profiling = false
	if o.CPUProfile != nil {
		if _, err := o.CPUProfile.Write(prof.Bytes()); err != nil {
			return nil, fmt.Errorf("writing the CPU profile: %w", err)
		}
	}
	if rep.CPUByComponent, err = componentCPU(prof.Bytes(), o.Deployments); err != nil {
		return nil, err
	}
	for _, c := range rep.CPUByComponent {
		if c.Component == "hub" {
			rep.HubCPUSecondsPer1000Workloads = c.SecondsPer1000Workloads
		}
	}
	rep.HubWritesPerWorkload = float64(progress.versionCount()-versionsBefore) / float64(max(o.Deployments, 1))
	if floorPerWorkload := rep.HubWritesPerWorkload * rep.FloorMillisPerWrite; floorPerWorkload > 0 {
		// seconds per 1,000 workloads are milliseconds per workload
		rep.HubCPURatioToFloor = rep.HubCPUSecondsPer1000Workloads / floorPerWorkload
	}
	reconcilesAfter, err := reconciles()
	if err != nil {
		return nil, err
	}
	rep.Reconciles = reconcileDelta(reconcilesBefore, reconcilesAfter)
	rep.Memory = memoryNow()
	if o.Capacity > 0 {
		if rep.Capacity, err = capacityOutcome(waitCtx, f, fleetSpec, ns, o.Capacity); err != nil {
			return nil, err
		}
	}
	return rep, nil
}

// poll checks cond every 100 ms until it holds or ctx ends.
func poll(ctx context.Context, cond func() (bool, error)) error {
	for {
		ok, err := cond()
		if err != nil || ok {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// policy p divides the Deployments labelled policy=p over two members by
// dynamic weight, rotating which two, so the fleet shares the load.
func policy(ns string, p int) *policyv1alpha1.PropagationPolicy {
	return &policyv1alpha1.PropagationPolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("policy-%d", p)},
		Spec: policyv1alpha1.PropagationSpec{
			ResourceSelectors: []policyv1alpha1.ResourceSelector{{
				APIVersion: "apps/v1", Kind: "Deployment",
				LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"policy": fmt.Sprint(p)}},
			}},
			Placement: policyv1alpha1.Placement{
				SpreadConstraints: []policyv1alpha1.SpreadConstraint{{SpreadByField: policyv1alpha1.SpreadByFieldCluster, MinGroups: 2, MaxGroups: ptr.To[int32](2)}},
				ReplicaScheduling: &policyv1alpha1.ReplicaSchedulingStrategy{
					ReplicaSchedulingType:     policyv1alpha1.ReplicaSchedulingTypeDivided,
					ReplicaDivisionPreference: policyv1alpha1.ReplicaDivisionPreferenceWeighted,
				},
			},
		},
	}
}

// replicaRequest is what each replica of the benchmarks' Deployments
// asks for; simulated clusters size their room in these.
func replicaRequest() corev1.ResourceList {
	return corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m"), corev1.ResourceMemory: resource.MustParse("16Mi")}
}

func deployment(ns string, d, p int, replicas int32) *appsv1.Deployment {
	labels := map[string]string{"app": fmt.Sprintf("app-%d", d)}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("app-%d", d), Labels: map[string]string{"policy": fmt.Sprint(p)}},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name: "app", Image: "nginx:1.27",
					Resources: corev1.ResourceRequirements{Requests: replicaRequest()},
				}}},
			},
		},
	}
}
