package fleetbench

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/names"
	"github.com/shepherd-io/shepherd/pkg/scheme"
)

// progress watches the hub's bindings and Works. Besides answering "is
// everything scheduled / applied" from its cache, it stamps, with this
// process's clock, when each binding and Work was first seen and when it
// was first seen done (Scheduled, Applied): each stage's own rate and
// latency, apart from how fast the stage before it fed it.
type progress struct {
	client.Reader

	mu              sync.Mutex
	bindings, works stamps
	// noOps counts, by kind, updates that changed the resourceVersion
	// but nothing else: writes that cost the hub and told nobody anything.
	noOps map[string]int
	// bindingChanges counts binding updates by the parts they changed
	// (see changedParts): which writer wrote how often.
	bindingChanges map[string]int
	// stored sums, by kind, the JSON size of every version of the hub's
	// objects the watch saw: what the hub wrote to its storage.
	stored map[string]int64
	// versions counts them: the hub's writes of those kinds.
	versions map[string]int
}

// stamps are first-seen and first-done times by object key.
type stamps struct{ seen, done map[string]time.Time }

func newStamps() stamps { return stamps{seen: map[string]time.Time{}, done: map[string]time.Time{}} }

func (s stamps) record(key string, done bool, now time.Time) {
	if _, ok := s.seen[key]; !ok {
		s.seen[key] = now
	}
	if _, ok := s.done[key]; !ok && done {
		s.done[key] = now
	}
}

// watchProgress starts the watches and waits for them to sync; onBinding
// also sees every binding added or updated.
func watchProgress(ctx context.Context, cfg *rest.Config, onBinding ...func(any)) (*progress, error) {
	c, err := cache.New(cfg, cache.Options{Scheme: scheme.Scheme, DefaultUnsafeDisableDeepCopy: ptr.To(true)})
	if err != nil {
		return nil, err
	}
	p := &progress{Reader: c, bindings: newStamps(), works: newStamps(), noOps: map[string]int{}, bindingChanges: map[string]int{}, stored: map[string]int64{}, versions: map[string]int{}}
	for _, obj := range []client.Object{&workv1alpha1.ResourceBinding{}, &workv1alpha1.Work{}} {
		inf, err := c.GetInformer(ctx, obj)
		if err != nil {
			return nil, err
		}
		extra := func(any) {}
		if _, ok := obj.(*workv1alpha1.ResourceBinding); ok {
			extra = func(o any) {
				for _, fn := range onBinding {
					fn(o)
				}
			}
		}
		if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
			AddFunc: func(o any) { p.observe(o); p.countStored(o); extra(o) },
			UpdateFunc: func(old, o any) {
				p.observe(o)
				p.countNoOp(old, o)
				p.countBindingChange(old, o)
				p.countStored(o)
				extra(o)
			},
		}); err != nil {
			return nil, err
		}
	}
	// The hub's other writes of a workload: its events and its template.
	for _, obj := range []client.Object{&eventsv1.Event{}, &appsv1.Deployment{}} {
		inf, err := c.GetInformer(ctx, obj)
		if err != nil {
			return nil, err
		}
		if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
			AddFunc:    p.countStored,
			UpdateFunc: func(_, o any) { p.countStored(o) },
		}); err != nil {
			return nil, err
		}
	}
	go func() { _ = c.Start(ctx) }()
	if !c.WaitForCacheSync(ctx) {
		return nil, fmt.Errorf("watching the hub's bindings and Works: %w", context.Cause(ctx))
	}
	return p, nil
}

func (p *progress) observe(o any) {
	now := time.Now()
	p.mu.Lock()
	defer p.mu.Unlock()
	switch obj := o.(type) {
	case *workv1alpha1.ResourceBinding:
		p.bindings.record(obj.Namespace+"/"+obj.Name, meta.IsStatusConditionTrue(obj.Status.Conditions, workv1alpha1.ConditionScheduled), now)
	case *workv1alpha1.Work:
		p.works.record(obj.Namespace+"/"+obj.Name, meta.IsStatusConditionTrue(obj.Status.Conditions, workv1alpha1.WorkConditionApplied), now)
	}
}

// countNoOp counts an update whose object is the same as before but for
// its resourceVersion and managed fields.
func (p *progress) countNoOp(old, new any) {
	o, ok1 := old.(client.Object)
	n, ok2 := new.(client.Object)
	if !ok1 || !ok2 || o.GetResourceVersion() == n.GetResourceVersion() {
		return
	}
	strip := func(obj client.Object) client.Object {
		c := obj.DeepCopyObject().(client.Object)
		c.SetResourceVersion("")
		c.SetManagedFields(nil)
		return c
	}
	if !equality.Semantic.DeepEqual(strip(o), strip(n)) {
		return
	}
	kind := "Work"
	if _, ok := n.(*workv1alpha1.ResourceBinding); ok {
		kind = "ResourceBinding"
	}
	p.mu.Lock()
	p.noOps[kind]++
	p.mu.Unlock()
}

// changedParts names the parts of a binding an update changed, joined by
// "+": spec, status.conditions, status.aggregatedStatus and
// status.scheduling (decisions, last scheduled time, observed generation,
// affinity term). Each writer changes its own parts: the scheduler spec
// and status.scheduling with the Scheduled condition, the binding
// controller spec (target states) or the FullyApplied condition, the
// status aggregation status.aggregatedStatus.
func changedParts(o, n *workv1alpha1.ResourceBinding) string {
	var parts []string
	if !equality.Semantic.DeepEqual(o.Spec, n.Spec) {
		parts = append(parts, "spec")
	}
	if !equality.Semantic.DeepEqual(o.Status.Conditions, n.Status.Conditions) {
		parts = append(parts, "status.conditions")
	}
	if !equality.Semantic.DeepEqual(o.Status.AggregatedStatus, n.Status.AggregatedStatus) {
		parts = append(parts, "status.aggregatedStatus")
	}
	os, ns := o.Status, n.Status
	os.Conditions, ns.Conditions, os.AggregatedStatus, ns.AggregatedStatus = nil, nil, nil, nil
	if !equality.Semantic.DeepEqual(os, ns) {
		parts = append(parts, "status.scheduling")
	}
	if len(parts) == 0 {
		return "metadata"
	}
	return strings.Join(parts, "+")
}

func (p *progress) countBindingChange(old, new any) {
	o, ok1 := old.(*workv1alpha1.ResourceBinding)
	n, ok2 := new.(*workv1alpha1.ResourceBinding)
	if !ok1 || !ok2 || o.ResourceVersion == n.ResourceVersion {
		return
	}
	parts := changedParts(o, n)
	p.mu.Lock()
	p.bindingChanges[parts]++
	p.mu.Unlock()
}

// bindingWrites returns the binding updates by the parts they changed,
// per workload, most first.
func (p *progress) bindingWrites(workloads int) []PartRate {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]PartRate, 0, len(p.bindingChanges))
	for parts, n := range p.bindingChanges {
		out = append(out, PartRate{Parts: parts, PerWorkload: float64(n) / float64(max(workloads, 1))})
	}
	slices.SortFunc(out, func(a, b PartRate) int {
		if a.PerWorkload != b.PerWorkload {
			if a.PerWorkload > b.PerWorkload {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Parts, b.Parts)
	})
	return out
}

// PartRate is how often per workload a binding update changed these parts.
type PartRate struct {
	Parts       string  `json:"parts"`
	PerWorkload float64 `json:"perWorkload"`
}

// countStored adds the size of one version of an object, as JSON without
// its managed fields (which the storage holds too, so this is a floor).
func (p *progress) countStored(o any) {
	obj, ok := o.(client.Object)
	if !ok {
		return
	}
	b, err := json.Marshal(obj)
	if err != nil {
		return
	}
	kind := fmt.Sprintf("%T", obj)
	kind = kind[strings.LastIndex(kind, ".")+1:]
	p.mu.Lock()
	p.stored[kind] += int64(len(b))
	p.versions[kind]++
	p.mu.Unlock()
}

// versionCount returns the versions seen so far, in all.
func (p *progress) versionCount() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, v := range p.versions {
		n += v
	}
	return n
}

// storedBytes returns the bytes stored so far, by kind.
func (p *progress) storedBytes() map[string]int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return maps.Clone(p.stored)
}

// noOpWrites returns the counts of writes that changed nothing.
func (p *progress) noOpWrites() map[string]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return maps.Clone(p.noOps)
}

// StageStats is one stage of the loop, from the watch's clock: an object
// counts from when it was first seen to when it was first seen done.
type StageStats struct {
	// PerSecond is the objects done divided by the time from the first
	// object seen to the last one done.
	PerSecond float64 `json:"perSecond"`
	// LatencyP50Seconds and LatencyP99Seconds are percentiles of the time
	// each object waited.
	LatencyP50Seconds float64 `json:"latencyP50Seconds"`
	LatencyP99Seconds float64 `json:"latencyP99Seconds"`
	// LastSeenSeconds is when, after the first Deployment was created, the
	// stage's last object appeared (written by the stage before).
	LastSeenSeconds float64 `json:"lastSeenSeconds"`
}

// stats summarizes the stamps of both stages; begin is when creation
// started.
func (p *progress) stats(begin time.Time) (scheduler, execution StageStats) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.bindings.stats(begin), p.works.stats(begin)
}

// statsIn summarizes the stamps of the bindings in namespace ns.
func (p *progress) statsIn(ns string, begin time.Time) StageStats {
	p.mu.Lock()
	defer p.mu.Unlock()
	in := newStamps()
	for key, at := range p.bindings.seen {
		if strings.HasPrefix(key, ns+"/") {
			in.seen[key] = at
			if done, ok := p.bindings.done[key]; ok {
				in.done[key] = done
			}
		}
	}
	return in.stats(begin)
}

func (s stamps) stats(begin time.Time) StageStats {
	var first, lastSeen, lastDone time.Time
	latencies := make([]time.Duration, 0, len(s.done))
	for key, seen := range s.seen {
		if first.IsZero() || seen.Before(first) {
			first = seen
		}
		if seen.After(lastSeen) {
			lastSeen = seen
		}
		if at, ok := s.done[key]; ok {
			latencies = append(latencies, at.Sub(seen))
			if at.After(lastDone) {
				lastDone = at
			}
		}
	}
	var out StageStats
	if len(latencies) == 0 {
		return out
	}
	slices.Sort(latencies)
	out.LatencyP50Seconds = percentile(latencies, 50).Seconds()
	out.LatencyP99Seconds = percentile(latencies, 99).Seconds()
	out.LastSeenSeconds = lastSeen.Sub(begin).Seconds()
	if span := lastDone.Sub(first).Seconds(); span > 0 {
		out.PerSecond = float64(len(latencies)) / span
	}
	return out
}

// percentile of sorted durations, nearest rank.
func percentile(sorted []time.Duration, pct int) time.Duration {
	i := (len(sorted)*pct + 99) / 100
	return sorted[max(0, min(len(sorted), i)-1)]
}

// allScheduled reports whether want bindings of ns are Scheduled and none
// is on its way out.
func allScheduled(ctx context.Context, hub client.Reader, ns string, want int) (bool, error) {
	var rbs workv1alpha1.ResourceBindingList
	if err := hub.List(ctx, &rbs, client.InNamespace(ns)); err != nil {
		return false, err
	}
	n := 0
	for i := range rbs.Items {
		if rbs.Items[i].DeletionTimestamp != nil {
			// A deleted workload's binding on its way out (its Works
			// being removed): the binding of the workload created again
			// under its name is yet to come.
			return false, nil
		}
		if meta.IsStatusConditionTrue(rbs.Items[i].Status.Conditions, workv1alpha1.ConditionScheduled) {
			n++
		}
	}
	return n == want, nil
}

// allApplied reports how many Works exist and whether every binding has
// a Work per target and every Work is Applied.
func allApplied(ctx context.Context, hub client.Reader) (int, bool, error) {
	n, missing, err := worksNotApplied(ctx, hub)
	return n, missing == "" && err == nil, err
}

// worksNotApplied is allApplied's finding, with what is missing said in
// words ("" when nothing is): how many Works are applied of how many the
// bindings want, and the first few not applied with their Applied
// condition, so that a run that times out says where it stopped.
func worksNotApplied(ctx context.Context, hub client.Reader) (int, string, error) {
	var rbs workv1alpha1.ResourceBindingList
	if err := hub.List(ctx, &rbs); err != nil {
		return 0, "", err
	}
	want := 0
	for i := range rbs.Items {
		want += len(rbs.Items[i].Spec.Clusters)
	}
	// The bindings' Works only: the fleet's own (the multi-cluster Service
	// API sent to every member) are no part of the pipeline measured.
	var works workv1alpha1.WorkList
	if err := hub.List(ctx, &works, client.HasLabels{workv1alpha1.LabelBindingName}); err != nil {
		return 0, "", err
	}
	applied := 0
	var pending []string
	for i := range works.Items {
		w := &works.Items[i]
		c := meta.FindStatusCondition(w.Status.Conditions, workv1alpha1.WorkConditionApplied)
		if c != nil && c.Status == metav1.ConditionTrue {
			applied++
			continue
		}
		if len(pending) < maxPendingNamed {
			state := "no Applied condition"
			if c != nil {
				state = fmt.Sprintf("Applied=%s %s: %s", c.Status, c.Reason, c.Message)
			}
			pending = append(pending, w.Namespace+"/"+w.Name+" ("+state+")")
		}
	}
	if applied == len(works.Items) && len(works.Items) == want && want > 0 {
		return len(works.Items), "", nil
	}
	return len(works.Items), fmt.Sprintf("%d of %d Works applied (the bindings want %d); not applied: %s",
		applied, len(works.Items), want, strings.Join(pending, "; ")), nil
}

// maxPendingNamed is how many Works not applied a timeout names.
const maxPendingNamed = 5

// fleetWorksApplied reports whether the members' Works that no binding
// owns (those the controllers send every member when it joins) are all
// Applied, and every member has one, so that a fleet whose Works are not
// written yet does not count as settled.
func fleetWorksApplied(ctx context.Context, hub client.Reader, members []string) (bool, error) {
	var works workv1alpha1.WorkList
	if err := hub.List(ctx, &works); err != nil {
		return false, err
	}
	have := map[string]bool{}
	for i := range works.Items {
		w := &works.Items[i]
		cluster, ok := names.ClusterOfExecutionNamespace(w.Namespace)
		if !ok || !slices.Contains(members, cluster) || w.Labels[workv1alpha1.LabelBindingName] != "" {
			continue
		}
		if !meta.IsStatusConditionTrue(w.Status.Conditions, workv1alpha1.WorkConditionApplied) {
			return false, nil
		}
		have[cluster] = true
	}
	return len(have) == len(members), nil
}
