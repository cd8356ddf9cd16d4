package fleetbench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/internal/bench/hubbench"
	"github.com/shepherd-io/shepherd/internal/dev/localfleet"
	"github.com/shepherd-io/shepherd/internal/dev/simmember"
	"github.com/shepherd-io/shepherd/pkg/scheme"
)

// The multi-cluster Services benchmark: how fast an endpoint change in one
// member reaches every other member's imported EndpointSlices, what it
// costs the hub in writes, and what each exported Service costs in memory.
//
// A local fleet of API-only members (no controllers, pods or kubelets: the
// benchmark plays each exporting member's EndpointSlice controller by
// writing its slices itself, so nothing else moves them) runs Shepherd's
// controllers as `shepherd up` does. Services of ServicesNamespaces
// namespaces are each exported from ExportersPerService members, with
// EndpointsPerSlice endpoints each. Once every member imports them all,
// Changes endpoint changes are made at ChangesPerSecond: each replaces one
// endpoint's address of one export with an address never used before, and
// its latency is from the write to the moment the last other member's
// imported slices, seen through a watch, carry the new address.

// Defaults of ServicesOptions: the scale the multi-cluster Services are
// held to.
const (
	DefaultServicesMembers          = 20
	DefaultServices                 = 1000
	DefaultServicesExporters        = 2
	DefaultServicesEndpoints        = 2
	DefaultServicesNamespaces       = 10
	DefaultServicesChanges          = 300
	DefaultServicesChangesPerSecond = 5
	DefaultServicesTimeout          = 40 * time.Minute
	servicesIdleWindow              = 10 * time.Second
	// DefaultServicesSettle bounds the wait for the fleet's write rate
	// to stop falling before the changes (see settleWrites).
	DefaultServicesSettle          = 3 * time.Minute
	servicesCreators               = 16
	servicesMaxExportersPerService = 8
	servicesMaxEndpoints           = 100
)

// ServicesOptions size the multi-cluster Services benchmark.
type ServicesOptions struct {
	Members             int
	Services            int
	ExportersPerService int
	EndpointsPerSlice   int
	Namespaces          int
	Changes             int
	ChangesPerSecond    float64
	// Timeout bounds each wait: for the imports, and for the changes.
	Timeout time.Duration
	// Settle bounds the wait, once every import is complete, for the
	// fleet's write rate to stop falling before the changes start.
	Settle time.Duration
	// DataDir for the fleet; empty uses a temporary directory removed
	// afterwards.
	DataDir string
	Logger  logr.Logger
	// CPUProfile, when set, receives a CPU profile of the import (from the
	// first export until every member imports every export).
	CPUProfile io.Writer
	// HeapProfile, when set, receives a heap profile taken once every
	// member imports every export.
	HeapProfile io.Writer
}

// Validate refuses a size that cannot be run, naming the flag of `shepherd
// bench services` that sets it.
func (o ServicesOptions) Validate() error {
	var errs []error
	if o.Members < 2 {
		errs = append(errs, fmt.Errorf("--members %d: at least 2 (a change is seen by the members other than its own)", o.Members))
	}
	if o.Services < 1 {
		errs = append(errs, fmt.Errorf("--services %d: at least 1 Service must be exported", o.Services))
	}
	if o.ExportersPerService < 1 || o.ExportersPerService > min(o.Members, servicesMaxExportersPerService) {
		errs = append(errs, fmt.Errorf("--exporters %d: between 1 and %d (the members, at most %d)", o.ExportersPerService,
			min(max(o.Members, 1), servicesMaxExportersPerService), servicesMaxExportersPerService))
	}
	if o.EndpointsPerSlice < 1 || o.EndpointsPerSlice > servicesMaxEndpoints {
		errs = append(errs, fmt.Errorf("--endpoints %d: between 1 and %d (one EndpointSlice per export)", o.EndpointsPerSlice, servicesMaxEndpoints))
	}
	if o.Namespaces < 1 {
		errs = append(errs, fmt.Errorf("--namespaces %d: at least 1", o.Namespaces))
	}
	if o.Changes < 1 {
		errs = append(errs, fmt.Errorf("--changes %d: at least 1 endpoint change is measured", o.Changes))
	}
	if o.ChangesPerSecond <= 0 {
		errs = append(errs, fmt.Errorf("--changes-per-second %g: must be positive", o.ChangesPerSecond))
	}
	if o.Timeout <= 0 {
		errs = append(errs, fmt.Errorf("--timeout %s: must be positive", o.Timeout))
	}
	if o.Settle < servicesIdleWindow {
		errs = append(errs, fmt.Errorf("--settle %s: at least %s, one window of the idle rate", o.Settle, servicesIdleWindow))
	}
	return errors.Join(errs...)
}

// ServicesReport is what one run measured.
type ServicesReport struct {
	Members             int     `json:"members"`
	Services            int     `json:"services"`
	ExportersPerService int     `json:"exportersPerService"`
	EndpointsPerSlice   int     `json:"endpointsPerSlice"`
	Changes             int     `json:"changes"`
	ChangesPerSecond    float64 `json:"changesPerSecond"`
	FleetStartSeconds   float64 `json:"fleetStartSeconds"`
	// ImportedSeconds is from the first Service created until every
	// member other than an export's own carries every export's endpoints.
	ImportedSeconds float64 `json:"importedSeconds"`
	// Propagation is the latency of an endpoint change, from the write in
	// its member to the last other member's imported slices carrying it.
	Propagation LatencyStats `json:"propagation"`
	// FirstMember is the latency to the first other member.
	FirstMember LatencyStats `json:"firstMember"`
	// Overtaken counts the changes that some member reached only through
	// a later change of the same export, which replaced the whole list
	// before the first had propagated: their latency runs to that later
	// change's arrival. None at a rate the fleet keeps up with.
	Overtaken int `json:"overtaken"`
	// HubWritesPerChange are the hub's writes per endpoint change, net of
	// the idle rate measured for IdleWindowSeconds just before the
	// changes; MemberWritesPerChange the members' writes (the benchmark's
	// own change excluded). Negative when the fleet wrote more at rest
	// than during the changes, that is when it had not settled
	// (IdleSettled false): then only the gross figures say something.
	HubWritesPerChange    float64 `json:"hubWritesPerChange"`
	MemberWritesPerChange float64 `json:"memberWritesPerChange"`
	// HubWritesPerChangeGross and MemberWritesPerChangeGross are the same
	// with the idle rate not subtracted.
	HubWritesPerChangeGross    float64 `json:"hubWritesPerChangeGross"`
	MemberWritesPerChangeGross float64 `json:"memberWritesPerChangeGross"`
	// IdleWindowSeconds is the window the idle rate was measured over,
	// after SettleSeconds of waiting for the rate to stop falling (the
	// imports' last status reports still arriving); IdleSettled is false
	// when it was still falling after ServicesOptions.Settle.
	IdleWindowSeconds float64 `json:"idleWindowSeconds"`
	SettleSeconds     float64 `json:"settleSeconds"`
	IdleSettled       bool    `json:"idleSettled"`
	// WritesPerChange are the write requests per change by verb and
	// resource, most first, idle rate not subtracted.
	WritesPerChange []RequestRate `json:"writesPerChange"`
	// IdleWrites are the write requests per second of the idle window, by
	// verb and resource, most first: what a ClusterSet at rest writes.
	IdleWrites []RequestRate `json:"idleWrites"`
	// IdleReconciles are the reconciles of the idle window, by
	// controller, most first: which controllers those writes come from.
	IdleReconciles []ReconcileCount `json:"idleReconciles"`
	// Reconciles counts each controller's reconciles during the changes.
	Reconciles []ReconcileCount `json:"reconciles"`
	// Memory is the live heap the exports added, per exported Service.
	Memory ServicesMemory `json:"memory"`
	// ImportCPU splits the process's CPU while the imports were made by
	// component (hub, controllers, member), per 1,000 Services, as a CPU
	// profile sampled it: where importing a ClusterSet's Services goes.
	ImportCPU []ComponentCPU `json:"importCPU"`
	// ImportCPUSeconds is the process's CPU while the imports were made.
	ImportCPUSeconds float64 `json:"importCPUSeconds"`
}

// LatencyStats are percentiles of a latency, in seconds.
type LatencyStats struct {
	P50Seconds float64 `json:"p50Seconds"`
	P90Seconds float64 `json:"p90Seconds"`
	P99Seconds float64 `json:"p99Seconds"`
	MaxSeconds float64 `json:"maxSeconds"`
}

func latencyStats(ds []time.Duration) LatencyStats {
	if len(ds) == 0 {
		return LatencyStats{}
	}
	sorted := slices.Clone(ds)
	slices.Sort(sorted)
	return LatencyStats{
		P50Seconds: percentile(sorted, 50).Seconds(), P90Seconds: percentile(sorted, 90).Seconds(),
		P99Seconds: percentile(sorted, 99).Seconds(), MaxSeconds: sorted[len(sorted)-1].Seconds(),
	}
}

// RunServices starts a fleet, exports and imports the Services, makes the
// endpoint changes, measures, and stops the fleet.
func RunServices(ctx context.Context, o ServicesOptions) (*ServicesReport, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	if o.DataDir == "" {
		dir, err := os.MkdirTemp("", "shepherd-bench-services-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(dir)
		o.DataDir = dir
	}
	rep := &ServicesReport{Members: o.Members, Services: o.Services, ExportersPerService: o.ExportersPerService,
		EndpointsPerSlice: o.EndpointsPerSlice, Changes: o.Changes, ChangesPerSecond: o.ChangesPerSecond}
	started := time.Now()
	fleetSpec := simmember.DefaultFleet(o.Members)
	f, err := localfleet.Start(ctx, localfleet.Options{DataDir: o.DataDir, Fleet: fleetSpec, Logger: o.Logger, MembersAPIOnly: true})
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Stop() }()
	rep.FleetStartSeconds = time.Since(started).Seconds()
	cfg := f.Hub.RestConfig()
	cfg.QPS, cfg.Burst = 1000, 2000
	hub, err := client.New(cfg, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		return nil, err
	}
	load, err := newServicesLoad(o, f.Members)
	if err != nil {
		return nil, err
	}
	// The fleet's own Works (the multi-cluster Service API each member
	// receives when it joins) settle before anything is measured.
	if err := poll(ctx, func() (bool, error) { return fleetWorksApplied(ctx, hub, load.memberNames()) }); err != nil {
		return nil, fmt.Errorf("waiting for the fleet's own Works to be applied: %w", err)
	}
	if err := load.awaitAPI(ctx); err != nil {
		return nil, err
	}
	if err := load.createNamespaces(ctx); err != nil {
		return nil, err
	}
	heapBefore, err := steadyHeap(ctx)
	if err != nil {
		return nil, err
	}

	// Import: every export's endpoints in every other member.
	waitCtx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	begin := time.Now()
	tr, err := startTracker(waitCtx, load)
	if err != nil {
		return nil, err
	}
	// Whichever tracker runs when the run ends stops (stop is idempotent).
	defer func() {
		if tr != nil {
			tr.stop()
		}
	}()
	initial := load.expectInitial(tr, begin)
	var prof bytes.Buffer
	if err := pprof.StartCPUProfile(&prof); err != nil {
		return nil, fmt.Errorf("starting the CPU profile: %w", err)
	}
	cpuBegin := hubbench.ProcessCPU()
	o.Logger.Info("exporting the Services", "services", o.Services, "exporters", o.ExportersPerService, "members", o.Members)
	err = load.export(waitCtx)
	if err == nil {
		err = tr.await(waitCtx, initial, "the imports (endpoint addresses in every other member)", o.Logger)
	}
	pprof.StopCPUProfile()
	if err != nil {
		return nil, fmt.Errorf("exporting and importing the Services: %w", err)
	}
	if o.CPUProfile != nil {
		if _, err := o.CPUProfile.Write(prof.Bytes()); err != nil {
			return nil, fmt.Errorf("writing the CPU profile: %w", err)
		}
	}
	rep.ImportedSeconds = time.Since(begin).Seconds()
	o.Logger.Info("every member imports every export", "after", time.Since(begin).Round(time.Second))
	rep.ImportCPUSeconds = (hubbench.ProcessCPU() - cpuBegin).Seconds()
	if rep.ImportCPU, err = componentCPU(prof.Bytes(), o.Services); err != nil {
		return nil, err
	}
	// The tracker's caches are the benchmark's, not Shepherd's: gone
	// before the heap is measured.
	tr.stop()

	// The idle rate of writes, once the fleet has settled, then the
	// changes. Settled starts with every Work applied as it stands: the
	// tracker sees the endpoints arrive before the members' last applies
	// and status reports are done. The heap is read once settled too:
	// what the import's burst of writes left behind for a while (the API
	// servers keep every object's recent versions for their watchers) is
	// not what an exported Service costs.
	caughtUp := time.Now()
	if err := load.caughtUp(waitCtx, hub); err != nil {
		return nil, fmt.Errorf("waiting for every Work to be applied at its generation and every import completed: %w", err)
	}
	o.Logger.Info("every Work applied at its generation, every import completed", "after", time.Since(caughtUp).Round(time.Second))
	idle, err := settleWrites(ctx, cfg, o.Settle, o.Logger)
	if err != nil {
		return nil, err
	}
	rep.IdleWindowSeconds = idle.window.Seconds()
	rep.SettleSeconds = idle.waited.Seconds()
	rep.IdleSettled = idle.settled
	rep.IdleWrites = writesPer(requestDelta(idle.before, idle.after), int(idle.window.Seconds()))
	rep.IdleReconciles = reconcileDelta(idle.reconcilesBefore, idle.reconcilesAfter)
	heapAfter, err := steadyHeap(ctx)
	if err != nil {
		return nil, err
	}
	if o.HeapProfile != nil {
		if _, err := o.HeapProfile.Write(heapAfter.profile); err != nil {
			return nil, fmt.Errorf("writing the heap profile: %w", err)
		}
	}
	rep.Memory = heapAfter.minus(heapBefore).per(o.Services)

	changeCtx, cancelChanges := context.WithTimeout(ctx, o.Timeout)
	defer cancelChanges()
	if tr, err = startTracker(changeCtx, load); err != nil {
		return nil, err
	}
	before, err := apiRequests(ctx, cfg)
	if err != nil {
		return nil, err
	}
	reconcilesBefore, err := reconciles()
	if err != nil {
		return nil, err
	}
	changesStart := time.Now()
	o.Logger.Info("changing endpoints", "changes", o.Changes, "perSecond", o.ChangesPerSecond)
	changes, err := load.change(changeCtx, tr)
	if err != nil {
		return nil, err
	}
	if err := tr.await(changeCtx, changes, "the endpoint changes (in every other member)", o.Logger); err != nil {
		return nil, fmt.Errorf("waiting for the endpoint changes to reach every member: %w", err)
	}
	span := time.Since(changesStart)
	after, err := apiRequests(ctx, cfg)
	if err != nil {
		return nil, err
	}
	reconcilesAfter, err := reconciles()
	if err != nil {
		return nil, err
	}
	rep.Reconciles = reconcileDelta(reconcilesBefore, reconcilesAfter)
	last, first := tr.latencies(changes)
	rep.Propagation, rep.FirstMember = latencyStats(last), latencyStats(first)
	rep.Overtaken = tr.overtaken(changes)
	rep.WritesPerChange = writesPer(requestDelta(before, after), o.Changes)
	hubIdle, memberIdle := hubAndMemberWrites(idle.before, idle.after)
	hubW, memberW := hubAndMemberWrites(before, after)
	// The benchmark's own write of each change is a member's write too.
	memberW -= float64(o.Changes)
	rep.HubWritesPerChangeGross = hubW / float64(o.Changes)
	rep.MemberWritesPerChangeGross = memberW / float64(o.Changes)
	scale := span.Seconds() / idle.window.Seconds()
	rep.HubWritesPerChange = (hubW - hubIdle*scale) / float64(o.Changes)
	rep.MemberWritesPerChange = (memberW - memberIdle*scale) / float64(o.Changes)
	return rep, nil
}

// idleReading is the API servers' request counters at both ends of the
// window the idle rate was measured over.
type idleReading struct {
	before, after map[requestKey]float64
	// reconcilesBefore and reconcilesAfter are the controllers'
	// reconciles at both ends of the window (reconciles).
	reconcilesBefore, reconcilesAfter map[string]reconcileReading
	window                            time.Duration
	waited                            time.Duration
	settled                           bool
}

// settleWrites measures the fleet's writes in consecutive windows of
// servicesIdleWindow until their rate stops falling (settled), for at most
// settle, and returns the last window. Right after the imports
// the members' last status reports are still arriving, and a window taken
// then counts them as the idle rate, which once exceeded what the changes
// themselves cost.
func settleWrites(ctx context.Context, cfg *rest.Config, settle time.Duration, log logr.Logger) (idleReading, error) {
	start := time.Now()
	prev, err := apiRequests(ctx, cfg)
	if err != nil {
		return idleReading{}, err
	}
	prevReconciles, err := reconciles()
	if err != nil {
		return idleReading{}, err
	}
	var rates []float64
	for {
		windowStart := time.Now()
		select {
		case <-ctx.Done():
			return idleReading{}, ctx.Err()
		case <-time.After(servicesIdleWindow):
		}
		cur, err := apiRequests(ctx, cfg)
		if err != nil {
			return idleReading{}, err
		}
		curReconciles, err := reconciles()
		if err != nil {
			return idleReading{}, err
		}
		window := time.Since(windowStart)
		hub, member := hubAndMemberWrites(prev, cur)
		rates = append(rates, (hub+member)/window.Seconds())
		done := settled(rates)
		if done || time.Since(start) >= settle {
			log.Info("idle write rate", "perSecond", fmt.Sprintf("%.1f", rates[len(rates)-1]), "settled", done, "windows", len(rates))
			return idleReading{before: prev, after: cur, reconcilesBefore: prevReconciles, reconcilesAfter: curReconciles,
				window: window, waited: windowStart.Sub(start), settled: done}, nil
		}
		prev, prevReconciles = cur, curReconciles
	}
}

// caughtUp waits until every Work on the hub is Applied at its current
// generation and every member's ServiceImports are completed (they list
// the exporting clusters in their status). It lists every Work and every
// import, so it looks every ten seconds, not as often as poll.
func (l *servicesLoad) caughtUp(ctx context.Context, hub client.Reader) error {
	for {
		done, err := l.allCaughtUp(ctx, hub)
		if err != nil || done {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(caughtUpEvery):
		}
	}
}

const caughtUpEvery = 10 * time.Second

func (l *servicesLoad) allCaughtUp(ctx context.Context, hub client.Reader) (bool, error) {
	var works workv1alpha1.WorkList
	if err := hub.List(ctx, &works); err != nil {
		return false, err
	}
	if slices.ContainsFunc(works.Items, func(w workv1alpha1.Work) bool {
		c := meta.FindStatusCondition(w.Status.Conditions, workv1alpha1.WorkConditionApplied)
		return c == nil || c.Status != metav1.ConditionTrue || c.ObservedGeneration != w.Generation
	}) {
		return false, nil
	}
	for _, m := range l.members {
		sis, err := m.mcs.MulticlusterV1beta1().ServiceImports("").List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		if slices.ContainsFunc(sis.Items, func(si mcsv1beta1.ServiceImport) bool { return len(si.Status.Clusters) == 0 }) {
			return false, nil
		}
	}
	return true, nil
}

// settled: the last window's write rate fell by no more than a fifth
// from the one before (or rose), so the rate has reached its floor.
func settled(rates []float64) bool {
	n := len(rates)
	return n >= 2 && rates[n-1] >= 0.8*rates[n-2]
}

// Readings of the live heap: the lowest of heapReadings, heapReadingGap
// apart. An API server's periodic work holds memory while it runs (its
// watch cache's consistency check lists every object of a resource from
// etcd, every few minutes), and one reading may fall in the middle of it.
const (
	heapReadings   = 3
	heapReadingGap = 5 * time.Second
)

// steadyHeap reads the live heap, split by component, heapReadings times
// and returns the lowest reading.
func steadyHeap(ctx context.Context) (heapSplit, error) {
	var low heapSplit
	for i := range heapReadings {
		if i > 0 {
			select {
			case <-ctx.Done():
				return heapSplit{}, ctx.Err()
			case <-time.After(heapReadingGap):
			}
		}
		h, err := liveHeap()
		if err != nil {
			return heapSplit{}, err
		}
		if i == 0 || h.live < low.live {
			low = h
		}
	}
	return low, nil
}

// liveHeap collects the garbage twice (the second frees what the first
// could only mark) and reads the live heap, split by component.
func liveHeap() (heapSplit, error) {
	runtime.GC()
	runtime.GC()
	return heapByComponent()
}
