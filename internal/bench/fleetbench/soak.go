package fleetbench

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/internal/dev/localfleet"
	"github.com/shepherd-io/shepherd/internal/dev/simmember"
	"github.com/shepherd-io/shepherd/pkg/scheme"
)

// SoakOptions size a soak: a hub, its controllers and simulated Pull
// clusters, loaded with Workloads and then churned for Duration.
type SoakOptions struct {
	Duration              time.Duration
	Workloads, Policies   int
	SimulatedPullClusters int
	// ChurnPerSecond is the steady rate of changes: scales, image edits,
	// and deletions with the workload created again.
	ChurnPerSecond float64
	// ChurnWriters is how many writers make the changes at once (default
	// DefaultChurnWriters): enough that the rate holds while each change
	// takes longer than the gap between two.
	ChurnWriters int
	// Samples is how many times memory, goroutines, writes and latency are
	// sampled over Duration (default 12).
	Samples int
	// MaxHeapGrowth bounds the live heap's growth from the median of the
	// first quarter of the samples to the last, as a fraction (default
	// 0.2): more is a leak.
	MaxHeapGrowth float64
	// Seed draws the churn; the same seed makes the same changes.
	Seed    uint64
	DataDir string
	Logger  logr.Logger
}

// SoakSample is one moment of a soak. The heap is the live heap, measured
// right after a garbage collection.
type SoakSample struct {
	AtSeconds          float64 `json:"atSeconds"`
	LiveHeapBytes      uint64  `json:"liveHeapBytes"`
	RSSBytes           uint64  `json:"rssBytes"`
	Goroutines         int     `json:"goroutines"`
	Changes            int     `json:"changes"`
	HubWritesPerSecond float64 `json:"hubWritesPerSecond"`
	// Scheduling latency, from a scale written on the hub to its binding
	// Scheduled with the new replicas, of the scales in this window.
	SchedulingP50Millis float64 `json:"schedulingP50Millis"`
	SchedulingP99Millis float64 `json:"schedulingP99Millis"`
	Scales              int     `json:"scales"`
}

// SoakReport is what a soak measured.
type SoakReport struct {
	Workloads             int     `json:"workloads"`
	SimulatedPullClusters int     `json:"simulatedPullClusters"`
	DurationSeconds       float64 `json:"durationSeconds"`
	ChurnPerSecond        float64 `json:"churnPerSecond"`
	// AchievedChurnPerSecond is the rate of changes made, refusals not
	// counted; MissedTicks the changes not made because every one of the
	// ChurnWriters was still busy (none when the rate held).
	AchievedChurnPerSecond float64 `json:"achievedChurnPerSecond"`
	ChurnWriters           int     `json:"churnWriters"`
	MissedTicks            int     `json:"missedTicks"`
	Seed                   uint64  `json:"seed"`
	// LoadSeconds is how long the workloads took to be placed and applied
	// before the churn began.
	LoadSeconds float64      `json:"loadSeconds"`
	Samples     []SoakSample `json:"samples"`
	// HeapGrowth is the last sample's live heap over the median of the
	// first quarter's, minus 1;
	// WithinBound says it is at most MaxHeapGrowth.
	HeapGrowth    float64 `json:"heapGrowth"`
	MaxHeapGrowth float64 `json:"maxHeapGrowth"`
	WithinBound   bool    `json:"withinBound"`
	// ConvergeSeconds is how long the fleet took, once the churn stopped,
	// to have every binding Scheduled and every Work applied; Violations
	// are the invariants broken then (the goal is none).
	ConvergeSeconds float64  `json:"convergeSeconds"`
	Violations      []string `json:"violations"`
	// Refused counts the writes the hub refused for overload (a
	// timeout, a 5xx, a 429): a change the churn skipped (a re-creation
	// is tried again at the next tick), or a creation while loading or
	// after the churn, tried again after a back-off. An overloaded hub
	// slows the soak down instead of ending it.
	Refused int `json:"refused"`
}

// overloaded reports whether err is the hub refusing a request for load
// (etcd's "request timed out" arrives as a 500), not the request being
// wrong: the churn skips such a change and goes on.
func overloaded(err error) bool {
	return apierrors.IsTimeout(err) || apierrors.IsServerTimeout(err) || apierrors.IsTooManyRequests(err) ||
		apierrors.IsServiceUnavailable(err) || apierrors.IsInternalError(err)
}

// loadedRetryStart is createLoaded's first back-off (tests shorten it).
var loadedRetryStart = time.Second

// createLoaded creates obj on a hub that may refuse for load: an
// overloaded refusal is tried again (after 1 s, doubling up to 30 s)
// until ctx ends, and AlreadyExists after such a refusal counts as done (a
// create that timed out may have been stored). It returns how many
// refusals it met.
func createLoaded(ctx context.Context, hub client.Client, obj client.Object) (int, error) {
	refused, wait := 0, loadedRetryStart
	for {
		err := hub.Create(ctx, obj)
		switch {
		case err == nil:
			return refused, nil
		case refused > 0 && apierrors.IsAlreadyExists(err):
			return refused, nil
		case !overloaded(err):
			return refused, err
		}
		refused++
		select {
		case <-ctx.Done():
			return refused, fmt.Errorf("%w (after %d refusals for load, the last: %v)", ctx.Err(), refused, err)
		case <-time.After(wait):
		}
		wait = min(2*wait, 30*time.Second)
	}
}

// scaleWatch times scales: from the write to the binding Scheduled with
// the new replicas.
type scaleWatch struct {
	mu      sync.Mutex
	pending map[string]scaleWant // Deployment name -> what it waits for
	done    []time.Duration
}

type scaleWant struct {
	replicas int32
	at       time.Time
}

func (w *scaleWatch) expect(name string, replicas int32, at time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.pending[name] = scaleWant{replicas, at}
}

func (w *scaleWatch) forget(name string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.pending, name)
}

// otherReplicas draws a replica count from 1 to 4 other than cur: a scale
// that changed nothing would leave nothing to schedule, and its timer
// would run until an unrelated change of the binding (that inflated the
// scheduling latencies of the first hour-long run).
func otherReplicas(r *rand.Rand, cur int32) int32 {
	n := 1 + int32(r.IntN(3)) // 1..3
	if n >= cur && cur >= 1 && cur <= 4 {
		n++ // skip cur: 1..4 without it
	}
	return n
}

func (w *scaleWatch) observe(o any) {
	b, ok := o.(*workv1alpha1.ResourceBinding)
	if !ok || !meta.IsStatusConditionTrue(b.Status.Conditions, workv1alpha1.ConditionScheduled) {
		return
	}
	var sum int32
	for _, t := range b.Spec.Clusters {
		if t.State != workv1alpha1.TargetUnscheduled {
			sum += t.Replicas
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if want, ok := w.pending[b.Spec.Resource.Name]; ok && b.Spec.Replicas == want.replicas && sum == want.replicas {
		w.done = append(w.done, time.Since(want.at))
		delete(w.pending, b.Spec.Resource.Name)
	}
}

// take returns the latencies seen since the last take.
func (w *scaleWatch) take() []time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := w.done
	w.done = nil
	slices.Sort(out)
	return out
}

// churnOp is one change of the soak's churn.
type churnOp int

const (
	opScale churnOp = iota
	opEditImage
	opRecreate
)

// nextOp draws a change: half scales, a third image edits, the rest a
// deletion with the workload created again.
func nextOp(r *rand.Rand) churnOp {
	switch n := r.IntN(6); {
	case n < 3:
		return opScale
	case n < 5:
		return opEditImage
	default:
		return opRecreate
	}
}

// heapGrowth is the last sample's live heap over the baseline, minus 1
// (0 without two samples): the baseline is the median of the first
// quarter of the samples (at least one, never the last), not the first
// sample alone, which is taken while the fleet still fills its caches and
// so flatters any growth after it (an hour's run read -50 % from a first
// sample twice the size of the settled heap).
func heapGrowth(samples []SoakSample) float64 {
	if len(samples) < 2 {
		return 0
	}
	n := min(max(len(samples)/4, 1), len(samples)-1)
	first := make([]uint64, n)
	for i := range first {
		first[i] = samples[i].LiveHeapBytes
	}
	slices.Sort(first)
	base := first[(n-1)/2]
	if base == 0 {
		return 0
	}
	return float64(samples[len(samples)-1].LiveHeapBytes)/float64(base) - 1
}

func (o *SoakOptions) defaults() error {
	if o.Workloads < 1 || o.Policies < 1 || o.SimulatedPullClusters < 2 || o.Duration <= 0 || o.ChurnPerSecond <= 0 {
		return fmt.Errorf("a soak needs --workloads and --policies of at least 1, --simulated-pull-clusters of at least 2 (each policy places on two), a positive --duration and --churn (got %d, %d, %d, %s, %g)",
			o.Workloads, o.Policies, o.SimulatedPullClusters, o.Duration, o.ChurnPerSecond)
	}
	if o.ChurnWriters < 0 {
		return fmt.Errorf("--churn-writers %d may not be negative (0 takes the default, %d)", o.ChurnWriters, DefaultChurnWriters)
	}
	if o.ChurnWriters == 0 {
		o.ChurnWriters = DefaultChurnWriters
	}
	if o.Samples < 0 || o.MaxHeapGrowth < 0 {
		return fmt.Errorf("--samples %d and --max-heap-growth %g may not be negative (0 takes the defaults, 12 and 0.2)", o.Samples, o.MaxHeapGrowth)
	}
	if o.Samples == 0 {
		o.Samples = 12
	}
	if o.MaxHeapGrowth == 0 {
		o.MaxHeapGrowth = 0.2
	}
	return nil
}

// Soak starts a hub with its controllers and simulated Pull clusters,
// places o.Workloads Deployments, churns them for o.Duration while
// sampling, then checks the fleet converges with nothing broken.
func Soak(ctx context.Context, o SoakOptions) (*SoakReport, error) {
	if err := o.defaults(); err != nil {
		return nil, err
	}
	if o.DataDir == "" {
		dir, err := os.MkdirTemp("", "shepherd-bench-soak-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(dir)
		o.DataDir = dir
	}
	f, err := localfleet.Start(ctx, localfleet.Options{DataDir: o.DataDir, Fleet: simmember.FleetSpec{}, Logger: o.Logger})
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Stop() }()
	return soak(ctx, o, on{fleet: f, ns: "soak", simPrefix: simPrefix})
}

// soak runs the soak on the fleet of where, its workloads placed on its
// simulated clusters only; o has its defaults.
func soak(ctx context.Context, o SoakOptions, where on) (*SoakReport, error) {
	rep := &SoakReport{Workloads: o.Workloads, SimulatedPullClusters: o.SimulatedPullClusters, DurationSeconds: o.Duration.Seconds(),
		ChurnPerSecond: o.ChurnPerSecond, Seed: o.Seed, MaxHeapGrowth: o.MaxHeapGrowth}
	cfg := where.fleet.Hub.RestConfig()
	cfg.QPS, cfg.Burst = 1000, 2000
	ns := where.ns
	sim := simOptions{prefix: where.simPrefix, labels: func(int) map[string]string { return map[string]string{runLabel: ns} }}
	if _, err := startSimulatedWith(ctx, cfg, o.SimulatedPullClusters, sim, o.Logger.WithName("simulated-agents")); err != nil {
		return nil, err
	}
	hub, err := client.New(cfg, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		return nil, err
	}
	if err := hub.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		return nil, err
	}
	scales := &scaleWatch{pending: map[string]scaleWant{}}
	watchCtx, stopWatching := context.WithCancel(ctx)
	defer stopWatching()
	progress, err := watchProgress(watchCtx, cfg, scales.observe)
	if err != nil {
		return nil, err
	}
	o.Logger.Info("loading", "workloads", o.Workloads, "clusters", o.SimulatedPullClusters)
	begin := time.Now()
	for p := range o.Policies {
		if err := hub.Create(ctx, soakPolicy(ns, p)); err != nil {
			return nil, fmt.Errorf("creating policy %d: %w", p, err)
		}
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(creators)
	var refusedMu sync.Mutex
	for d := range o.Workloads {
		g.Go(func() error {
			n, err := createLoaded(gctx, hub, deployment(ns, d, d%o.Policies, 2))
			refusedMu.Lock()
			rep.Refused += n
			refusedMu.Unlock()
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, fmt.Errorf("creating the workloads: %w", err)
	}
	if err := settle(ctx, progress, ns, o.Workloads, time.Hour); err != nil {
		return nil, fmt.Errorf("loading: %w", err)
	}
	rep.LoadSeconds = time.Since(begin).Seconds()

	// The churn, sampled at even intervals.
	replicas := make([]int32, o.Workloads)
	for i := range replicas {
		replicas[i] = 2
	}
	writers := min(o.ChurnWriters, o.Workloads)
	ch := &churn{hub: hub, ns: ns, o: o, replicas: replicas, scales: scales, writers: make([]churnWriter, writers)}
	for w := range ch.writers {
		ch.writers[w].r = rand.New(rand.NewPCG(o.Seed+uint64(w), o.Seed^0x50a4))
	}
	every := o.Duration / time.Duration(o.Samples)
	start := time.Now()
	versions := progress.versionCount()
	sample := func() {
		runtime.GC()
		m := memoryNow()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		lat := scales.take()
		now := time.Now()
		v := progress.versionCount()
		s := SoakSample{AtSeconds: now.Sub(start).Seconds(), LiveHeapBytes: ms.HeapAlloc, RSSBytes: m.RSSBytes, Goroutines: m.Goroutines,
			Changes: int(ch.changes.Load()), Scales: len(lat)}
		if len(rep.Samples) > 0 {
			s.HubWritesPerSecond = float64(v-versions) / (s.AtSeconds - rep.Samples[len(rep.Samples)-1].AtSeconds)
		}
		versions = v
		if len(lat) > 0 {
			s.SchedulingP50Millis = float64(percentile(lat, 50).Microseconds()) / 1000
			s.SchedulingP99Millis = float64(percentile(lat, 99).Microseconds()) / 1000
		}
		rep.Samples = append(rep.Samples, s)
		o.Logger.Info("soak sample", "at", time.Duration(s.AtSeconds*float64(time.Second)).Round(time.Second), "liveHeapMiB", s.LiveHeapBytes>>20,
			"goroutines", s.Goroutines, "hubWritesPerSecond", int(s.HubWritesPerSecond), "schedulingP99ms", int(s.SchedulingP99Millis))
	}
	churnCtx, stopChurn := context.WithCancelCause(ctx)
	defer stopChurn(nil)
	ch.fail = func(err error) { stopChurn(err) }
	missed := make(chan int, 1)
	go func() {
		missed <- drive(churnCtx, pacedTicks(churnCtx, o.ChurnPerSecond, o.Duration), writers, ch.change)
	}()
	sampling := time.NewTicker(every)
	defer sampling.Stop()
	sample()
	var missedTicks int
	for done := false; !done; {
		select {
		case missedTicks = <-missed:
			done = true
		case <-sampling.C:
			sample()
		}
	}
	if err := context.Cause(churnCtx); err != nil && !errors.Is(err, context.Canceled) {
		return nil, fmt.Errorf("churn: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	rep.ChurnWriters = writers
	rep.MissedTicks = missedTicks
	rep.Refused += int(ch.refused.Load())
	rep.AchievedChurnPerSecond = float64(ch.changes.Load()) / time.Since(start).Seconds()
	var recreate []int
	for _, w := range ch.writers {
		recreate = append(recreate, w.recreate...)
	}
	sample()
	rep.HeapGrowth = heapGrowth(rep.Samples)
	rep.WithinBound = rep.HeapGrowth <= o.MaxHeapGrowth

	// Converged: what is left, placed and applied, as the templates say.
	for _, d := range recreate {
		n, err := createLoaded(ctx, hub, deployment(ns, d, d%o.Policies, replicas[d]))
		rep.Refused += n
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return nil, err
		}
	}
	converging := time.Now()
	v, err := converge(ctx, progress, ns, replicas, 15*time.Minute)
	if err != nil {
		return nil, err
	}
	rep.ConvergeSeconds = time.Since(converging).Seconds()
	rep.Violations = append(rep.Violations, v...)
	return rep, nil
}

// soakPolicy is policy p on the soak's own simulated clusters alone: those
// labelled with its namespace (on a fleet of its own, every cluster).
func soakPolicy(ns string, p int) *policyv1alpha1.PropagationPolicy {
	pol := policy(ns, p)
	pol.Spec.Placement.ClusterAffinity = &policyv1alpha1.ClusterAffinity{
		LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{runLabel: ns}},
	}
	return pol
}

// converge waits, at most timeout, until the fleet holds what the soak's
// templates say, and returns what is still wrong then. Every binding
// Scheduled and every Work applied is not enough: a binding whose
// clusters a failover just took away (a simulated cluster's Lease late on
// a loaded machine) still reads Scheduled until the scheduler places it
// again, so the invariants themselves are what is waited for.
func converge(ctx context.Context, hub client.Reader, ns string, replicas []int32, timeout time.Duration) ([]string, error) {
	wait, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := settle(wait, hub, ns, len(replicas), timeout); err != nil {
		v, verr := soakViolations(ctx, hub, ns, replicas)
		return append([]string{err.Error()}, v...), verr
	}
	var v []string
	err := poll(wait, func() (bool, error) {
		now, err := soakViolations(wait, hub, ns, replicas)
		if err != nil {
			return false, err
		}
		v = now
		return len(v) == 0, nil
	})
	if err != nil && wait.Err() == nil {
		return nil, err
	}
	return v, nil
}

// settle waits until want bindings of ns are Scheduled and every Work is
// applied.
func settle(ctx context.Context, hub client.Reader, ns string, want int, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := poll(ctx, func() (bool, error) { return allScheduled(ctx, hub, ns, want) }); err != nil {
		return fmt.Errorf("waiting for %d bindings Scheduled: %w", want, err)
	}
	if err := poll(ctx, func() (bool, error) { _, done, err := allApplied(ctx, hub); return done, err }); err != nil {
		return fmt.Errorf("waiting for every Work applied: %w", err)
	}
	return nil
}

// soakViolations checks the settled fleet: a binding per workload with
// the workload's replicas on two clusters (one for a single replica), a Work per target and none
// more, and no binding or Work of a workload that is gone.
func soakViolations(ctx context.Context, hub client.Reader, ns string, replicas []int32) ([]string, error) {
	var rbs workv1alpha1.ResourceBindingList
	if err := hub.List(ctx, &rbs, client.InNamespace(ns)); err != nil {
		return nil, err
	}
	var works workv1alpha1.WorkList
	if err := hub.List(ctx, &works, client.HasLabels{workv1alpha1.LabelBindingName}); err != nil {
		return nil, err
	}
	worksOf := map[string][]string{}
	for _, w := range works.Items {
		k := w.Labels[workv1alpha1.LabelBindingNamespace] + "/" + w.Labels[workv1alpha1.LabelBindingName]
		worksOf[k] = append(worksOf[k], w.Labels[workv1alpha1.LabelCluster])
	}
	var out []string
	seen := map[string]bool{}
	for _, b := range rbs.Items {
		var d int
		if _, err := fmt.Sscanf(b.Spec.Resource.Name, "app-%d", &d); err != nil || d < 0 || d >= len(replicas) {
			out = append(out, fmt.Sprintf("binding %s: not one of the soak's workloads", b.Name))
			continue
		}
		seen[b.Spec.Resource.Name] = true
		var sum int32
		var targets []string
		for _, t := range b.Spec.Clusters {
			if t.State != workv1alpha1.TargetUnscheduled {
				sum += t.Replicas
				targets = append(targets, t.Name)
			}
		}
		// Divided over two clusters: a single replica goes to one.
		if want := min(2, int(replicas[d])); sum != replicas[d] || len(targets) != want {
			out = append(out, fmt.Sprintf("binding %s: %d replicas on %v, want %d on %d clusters", b.Name, sum, targets, replicas[d], want))
		}
		got := worksOf[b.Namespace+"/"+b.Name]
		slices.Sort(got)
		slices.Sort(targets)
		if !slices.Equal(got, targets) {
			out = append(out, fmt.Sprintf("binding %s: Works for %v, targets %v", b.Name, got, targets))
		}
		delete(worksOf, b.Namespace+"/"+b.Name)
	}
	for d := range replicas {
		if !seen[fmt.Sprintf("app-%d", d)] {
			out = append(out, fmt.Sprintf("workload app-%d: no binding", d))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(worksOf)) {
		out = append(out, fmt.Sprintf("Works of binding %s, which is gone: %v", k, worksOf[k]))
	}
	return out, nil
}
