package dashboard

import (
	"context"
	"fmt"
	"sync"
	"time"

	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	autoscalingv1alpha1 "github.com/shepherd-io/shepherd/api/autoscaling/v1alpha1"
	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
	mcv1alpha1 "github.com/shepherd-io/shepherd/api/multicluster/v1alpha1"
	taskv1alpha1 "github.com/shepherd-io/shepherd/api/task/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/scheme"
)

// Source gives the pages their snapshot and says when it changed.
type Source interface {
	Snapshot(ctx context.Context) (*Snapshot, error)
	// Subscribe returns a channel that receives a value after changes
	// (coalesced), and a function that ends the subscription.
	Subscribe() (<-chan struct{}, func())
}

// coalesce is how long changes are gathered before open tabs are told: a
// status storm becomes one reload per tab per window.
const coalesce = time.Second

// HubSource is a Source reading the hub through one informer cache.
type HubSource struct {
	cache cache.Cache
	subs  *broadcaster
}

// NewHubSource starts the watch of the hub cfg reaches and waits until the
// cache is filled. It stops when ctx ends.
func NewHubSource(ctx context.Context, cfg *rest.Config) (*HubSource, error) {
	c, err := cache.New(cfg, cache.Options{
		Scheme: scheme.Scheme,
		// Works are kept without their manifests: the pages show only their
		// conditions, and a Secret's content must never reach them.
		ByObject: map[client.Object]cache.ByObject{
			&workv1alpha1.Work{}: {Transform: StripWork},
		},
		DefaultTransform: cache.TransformStripManagedFields(),
	})
	if err != nil {
		return nil, err
	}
	s := &HubSource{cache: c, subs: newBroadcaster()}
	for _, obj := range watched() {
		inf, err := c.GetInformer(ctx, obj)
		if err != nil {
			return nil, fmt.Errorf("watching %T: %w", obj, err)
		}
		if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
			AddFunc:    func(any) { s.subs.notify() },
			UpdateFunc: func(any, any) { s.subs.notify() },
			DeleteFunc: func(any) { s.subs.notify() },
		}); err != nil {
			return nil, err
		}
	}
	go func() { _ = c.Start(ctx) }()
	go s.subs.run(ctx)
	syncCtx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if !c.WaitForCacheSync(syncCtx) {
		return nil, fmt.Errorf("the hub's objects could not be listed within a minute: check the kubeconfig and that it may list and watch clusters, bindings, works, rescheduletasks, exportedservices, federatedhpas, cronfederatedhpas and events")
	}
	return s, nil
}

// watched are the kinds the dashboard reads.
func watched() []client.Object {
	return []client.Object{
		&clusterv1alpha1.Cluster{}, &workv1alpha1.ResourceBinding{}, &workv1alpha1.ClusterResourceBinding{},
		&workv1alpha1.Work{}, &taskv1alpha1.RescheduleTask{}, &eventsv1.Event{}, &mcv1alpha1.ExportedService{},
		&autoscalingv1alpha1.FederatedHPA{}, &autoscalingv1alpha1.CronFederatedHPA{},
	}
}

// StripWork drops a Work's manifests and its manifests' statuses: the
// dashboard shows conditions only, and a Secret's data must never reach it.
func StripWork(obj any) (any, error) {
	if w, ok := obj.(*workv1alpha1.Work); ok {
		w.Spec.Workload.Manifests = nil
		w.ManagedFields = nil
		for i := range w.Status.ManifestStatuses {
			w.Status.ManifestStatuses[i].Status = nil
		}
	}
	return obj, nil
}

// Subscribe implements Source.
func (s *HubSource) Subscribe() (<-chan struct{}, func()) { return s.subs.subscribe() }

// Snapshot implements Source. The objects are the cache's own, not copies:
// the pages only read them.
func (s *HubSource) Snapshot(ctx context.Context) (*Snapshot, error) {
	snap := &Snapshot{Now: time.Now()}
	var (
		clusters clusterv1alpha1.ClusterList
		rbs      workv1alpha1.ResourceBindingList
		crbs     workv1alpha1.ClusterResourceBindingList
		works    workv1alpha1.WorkList
		tasks    taskv1alpha1.RescheduleTaskList
		events   eventsv1.EventList
		exports  mcv1alpha1.ExportedServiceList
		fhpas    autoscalingv1alpha1.FederatedHPAList
		crons    autoscalingv1alpha1.CronFederatedHPAList
	)
	for _, l := range []client.ObjectList{&clusters, &rbs, &crbs, &works, &tasks, &events, &exports, &fhpas, &crons} {
		if err := s.cache.List(ctx, l, client.UnsafeDisableDeepCopy); err != nil {
			return nil, err
		}
	}
	for i := range clusters.Items {
		snap.Clusters = append(snap.Clusters, &clusters.Items[i])
	}
	for i := range rbs.Items {
		snap.Bindings = append(snap.Bindings, Binding{Obj: &rbs.Items[i]})
	}
	for i := range crbs.Items {
		snap.Bindings = append(snap.Bindings, Binding{Cluster: true, Obj: &crbs.Items[i]})
	}
	for i := range works.Items {
		snap.Works = append(snap.Works, &works.Items[i])
	}
	for i := range tasks.Items {
		snap.Tasks = append(snap.Tasks, &tasks.Items[i])
	}
	for i := range events.Items {
		snap.Events = append(snap.Events, &events.Items[i])
	}
	for i := range exports.Items {
		snap.ExportedServices = append(snap.ExportedServices, &exports.Items[i])
	}
	for i := range fhpas.Items {
		snap.FederatedHPAs = append(snap.FederatedHPAs, &fhpas.Items[i])
	}
	for i := range crons.Items {
		snap.CronFederatedHPAs = append(snap.CronFederatedHPAs, &crons.Items[i])
	}
	return snap, nil
}

// broadcaster tells subscribers that something changed, at most once per
// coalesce window.
type broadcaster struct {
	mu      sync.Mutex
	next    int
	subs    map[int]chan struct{}
	changed chan struct{}
}

func newBroadcaster() *broadcaster {
	return &broadcaster{subs: map[int]chan struct{}{}, changed: make(chan struct{}, 1)}
}

func (b *broadcaster) notify() {
	select {
	case b.changed <- struct{}{}:
	default:
	}
}

func (b *broadcaster) run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-b.changed:
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(coalesce):
		}
		b.mu.Lock()
		for _, ch := range b.subs {
			select {
			case ch <- struct{}{}:
			default:
			}
		}
		b.mu.Unlock()
	}
}

func (b *broadcaster) subscribe() (<-chan struct{}, func()) {
	b.mu.Lock()
	defer b.mu.Unlock()
	id := b.next
	b.next++
	ch := make(chan struct{}, 1)
	b.subs[id] = ch
	return ch, func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		delete(b.subs, id)
	}
}
