package fleetbench

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/scheme"
)

// progress watches the hub's bindings and Works. Besides answering "is
// everything scheduled / applied" from its cache, it stamps, with this
// process's clock, when each binding was first seen and when it was first
// seen Scheduled: the scheduler's own rate and latency, apart from how
// fast the detector created the bindings.
type progress struct {
	client.Reader

	mu        sync.Mutex
	seen      map[string]time.Time
	scheduled map[string]time.Time
}

// watchProgress starts the watches and waits for them to sync.
func watchProgress(ctx context.Context, cfg *rest.Config) (*progress, error) {
	c, err := cache.New(cfg, cache.Options{Scheme: scheme.Scheme, DefaultUnsafeDisableDeepCopy: ptr.To(true)})
	if err != nil {
		return nil, err
	}
	p := &progress{Reader: c, seen: map[string]time.Time{}, scheduled: map[string]time.Time{}}
	inf, err := c.GetInformer(ctx, &workv1alpha1.ResourceBinding{})
	if err != nil {
		return nil, err
	}
	if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    p.observe,
		UpdateFunc: func(_, o any) { p.observe(o) },
	}); err != nil {
		return nil, err
	}
	if _, err := c.GetInformer(ctx, &workv1alpha1.Work{}); err != nil {
		return nil, err
	}
	go func() { _ = c.Start(ctx) }()
	if !c.WaitForCacheSync(ctx) {
		return nil, fmt.Errorf("watching the hub's bindings and Works: %w", context.Cause(ctx))
	}
	return p, nil
}

func (p *progress) observe(o any) {
	rb, ok := o.(*workv1alpha1.ResourceBinding)
	if !ok {
		return
	}
	now := time.Now()
	key := rb.Namespace + "/" + rb.Name
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.seen[key]; !ok {
		p.seen[key] = now
	}
	if _, ok := p.scheduled[key]; !ok && meta.IsStatusConditionTrue(rb.Status.Conditions, workv1alpha1.ConditionScheduled) {
		p.scheduled[key] = now
	}
}

// SchedulerStats is the scheduler's side of a run, from the watch's
// clock: a binding counts from when it was first seen to when it was
// first seen Scheduled.
type SchedulerStats struct {
	// BindingsPerSecond is the bindings scheduled divided by the time from
	// the first binding seen to the last one scheduled.
	BindingsPerSecond float64 `json:"bindingsPerSecond"`
	// LatencyP50Seconds and LatencyP99Seconds are percentiles of the time
	// each binding waited to be scheduled.
	LatencyP50Seconds float64 `json:"latencyP50Seconds"`
	LatencyP99Seconds float64 `json:"latencyP99Seconds"`
	// LastBindingSeenSeconds is when, after the first Deployment was
	// created, the detector's last binding appeared.
	LastBindingSeenSeconds float64 `json:"lastBindingSeenSeconds"`
}

// stats summarizes the stamps; begin is when creation started.
func (p *progress) stats(begin time.Time) SchedulerStats {
	p.mu.Lock()
	defer p.mu.Unlock()
	var first, lastSeen, lastScheduled time.Time
	latencies := make([]time.Duration, 0, len(p.scheduled))
	for key, seen := range p.seen {
		if first.IsZero() || seen.Before(first) {
			first = seen
		}
		if seen.After(lastSeen) {
			lastSeen = seen
		}
		if at, ok := p.scheduled[key]; ok {
			latencies = append(latencies, at.Sub(seen))
			if at.After(lastScheduled) {
				lastScheduled = at
			}
		}
	}
	var s SchedulerStats
	if len(latencies) == 0 {
		return s
	}
	slices.Sort(latencies)
	s.LatencyP50Seconds = percentile(latencies, 50).Seconds()
	s.LatencyP99Seconds = percentile(latencies, 99).Seconds()
	s.LastBindingSeenSeconds = lastSeen.Sub(begin).Seconds()
	if span := lastScheduled.Sub(first).Seconds(); span > 0 {
		s.BindingsPerSecond = float64(len(latencies)) / span
	}
	return s
}

// percentile of sorted durations, nearest rank.
func percentile(sorted []time.Duration, pct int) time.Duration {
	i := (len(sorted)*pct + 99) / 100
	return sorted[max(0, min(len(sorted), i)-1)]
}

func allScheduled(ctx context.Context, hub client.Reader, ns string, want int) (bool, error) {
	var rbs workv1alpha1.ResourceBindingList
	if err := hub.List(ctx, &rbs, client.InNamespace(ns)); err != nil {
		return false, err
	}
	n := 0
	for i := range rbs.Items {
		if meta.IsStatusConditionTrue(rbs.Items[i].Status.Conditions, workv1alpha1.ConditionScheduled) {
			n++
		}
	}
	return n == want, nil
}

// allApplied reports how many Works exist and whether every binding has
// a Work per target and every Work is Applied.
func allApplied(ctx context.Context, hub client.Reader) (int, bool, error) {
	var rbs workv1alpha1.ResourceBindingList
	if err := hub.List(ctx, &rbs); err != nil {
		return 0, false, err
	}
	want := 0
	for i := range rbs.Items {
		want += len(rbs.Items[i].Spec.Clusters)
	}
	var works workv1alpha1.WorkList
	if err := hub.List(ctx, &works); err != nil {
		return 0, false, err
	}
	for i := range works.Items {
		if !meta.IsStatusConditionTrue(works.Items[i].Status.Conditions, workv1alpha1.WorkConditionApplied) {
			return len(works.Items), false, nil
		}
	}
	return len(works.Items), len(works.Items) == want && want > 0, nil
}
