package fleetbench

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"golang.org/x/sync/errgroup"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/membership"
	"github.com/shepherd-io/shepherd/pkg/names"
	"github.com/shepherd-io/shepherd/pkg/scheme"
)

// Simulated Pull clusters: registered on the hub exactly as `shepherd
// register` does, with no member API server behind them. One simulator in
// this process does for all of them what each one's agent writes to the
// hub: the Cluster's status once, a Lease renewal every
// simLeaseRenewPeriod, and for every Work a status write saying it was
// applied and is Healthy with all replicas ready. The hub's side (the
// controllers, the API server, etcd) is what is measured, and it does not
// know the difference. What the simulation saves is the agents' side: a
// thousand agents would each hold a watch on their own Works and Cluster,
// here one watch serves them all.

const (
	simPrefix           = "sim-"
	simLeaseDuration    = 40 * time.Second
	simLeaseRenewPeriod = 10 * time.Second
	simWorkers          = 16
	// simRenewers renew Leases at once: a thousand agents renew
	// independently, so the simulator must not be what holds them back.
	simRenewers = 64
)

// simulatedClusterName is the name of simulated Pull cluster i (of a run
// with the default prefix).
func simulatedClusterName(i int) string { return fmt.Sprintf("%s%04d", simPrefix, i+1) }

// simulator acknowledges the Works of simulated Pull clusters and renews
// their Leases.
type simulator struct {
	opts     simOptions
	hub      client.Client
	works    cache.Cache
	queue    workqueue.TypedRateLimitingInterface[types.NamespacedName]
	clusters []string
	log      logr.Logger
}

// simOptions vary the simulated clusters.
type simOptions struct {
	// labels(i), when not nil, are the labels of cluster i.
	labels func(i int) map[string]string
	// leaseDuration and renewPeriod are the agents' Lease timing
	// (simLeaseDuration and simLeaseRenewPeriod when zero).
	leaseDuration, renewPeriod time.Duration
	// prefix names the clusters (simPrefix when empty): a run on a fleet
	// it shares (see on) names its own, starting with simPrefix.
	prefix string
	// replicas is how many of the benchmarks' replicas (replicaRequest
	// and a pod each) each cluster must have room for, at
	// least; the room is simRoomReplicas when it is fewer. Shepherd
	// places by room: a scenario that puts more replicas on a cluster
	// than it reports room for leaves the rest Unschedulable.
	replicas int
}

// startSimulated registers n simulated Pull clusters, reports them Ready,
// and serves them until ctx ends.
func startSimulated(ctx context.Context, cfg *rest.Config, n int, log logr.Logger) (*simulator, error) {
	return startSimulatedWith(ctx, cfg, n, simOptions{}, log)
}

// startSimulatedWith is startSimulated with options.
func startSimulatedWith(ctx context.Context, cfg *rest.Config, n int, opts simOptions, log logr.Logger) (*simulator, error) {
	if opts.leaseDuration == 0 {
		opts.leaseDuration = simLeaseDuration
	}
	if opts.renewPeriod == 0 {
		opts.renewPeriod = simLeaseRenewPeriod
	}
	if opts.prefix == "" {
		opts.prefix = simPrefix
	}
	hub, err := client.New(cfg, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		return nil, err
	}
	s := &simulator{opts: opts, hub: hub, log: log}
	for i := range n {
		s.clusters = append(s.clusters, fmt.Sprintf("%s%04d", opts.prefix, i+1))
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(simWorkers)
	for i, name := range s.clusters {
		var l map[string]string
		if opts.labels != nil {
			l = opts.labels(i)
		}
		g.Go(func() error { return s.register(gctx, cfg, i, name, l) })
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	if s.works, err = cache.New(cfg, cache.Options{Scheme: scheme.Scheme}); err != nil {
		return nil, err
	}
	inf, err := s.works.GetInformer(ctx, &workv1alpha1.Work{})
	if err != nil {
		return nil, err
	}
	s.queue = workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[types.NamespacedName]())
	enqueue := func(o any) {
		if w, ok := o.(*workv1alpha1.Work); ok && needsAck(w) {
			s.queue.Add(types.NamespacedName{Namespace: w.Namespace, Name: w.Name})
		}
	}
	if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{AddFunc: enqueue, UpdateFunc: func(_, o any) { enqueue(o) }}); err != nil {
		return nil, err
	}
	go func() { _ = s.works.Start(ctx) }()
	if !s.works.WaitForCacheSync(ctx) {
		return nil, fmt.Errorf("the simulator's Work cache did not sync")
	}
	for range simWorkers {
		go s.work(ctx)
	}
	go s.renewLeases(ctx)
	go func() { <-ctx.Done(); s.queue.ShutDown() }()
	return s, nil
}

// register registers cluster i and writes what its agent would report
// first: its Lease and its status.
func (s *simulator) register(ctx context.Context, cfg *rest.Config, i int, name string, labels map[string]string) error {
	topo := []struct{ provider, region string }{{"aws", "us-east-1"}, {"gcp", "europe-west1"}, {"azure", "eastasia"}}[i%3]
	if _, err := membership.Register(ctx, cfg, s.hub, membership.RegisterOptions{Name: name, Provider: topo.provider, Region: topo.region, Zone: fmt.Sprintf("%s-%c", topo.region, 'a'+rune(i/3%3)), Labels: labels}); err != nil {
		return fmt.Errorf("registering %s: %w", name, err)
	}
	now := metav1.NewMicroTime(time.Now())
	lease := &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Namespace: names.ExecutionNamespace(name), Name: clusterv1alpha1.AgentLeaseName},
		Spec:       coordinationv1.LeaseSpec{HolderIdentity: ptr.To(name + "-simulated"), LeaseDurationSeconds: ptr.To(int32(s.opts.leaseDuration / time.Second)), AcquireTime: &now, RenewTime: &now},
	}
	if err := s.hub.Create(ctx, lease); err != nil {
		return fmt.Errorf("creating the Lease of %s: %w", name, err)
	}
	c := &clusterv1alpha1.Cluster{}
	if err := s.hub.Get(ctx, client.ObjectKey{Name: name}, c); err != nil {
		return err
	}
	orig := c.DeepCopy()
	c.Status = simulatedClusterStatus(c.Generation, s.opts.replicas)
	return s.hub.Status().Patch(ctx, c, client.MergeFrom(orig))
}

// simRoomReplicas is the room of a simulated cluster, in the benchmarks'
// replicas (replicaRequest and a pod each), unless a run asks for more.
const simRoomReplicas = 2200

// simulatedClusterStatus is a Ready member of 20 nodes with room for
// simRoomReplicas of the benchmarks' replicas, or for replicas when that
// is more: CPU, memory and pods alike.
func simulatedClusterStatus(generation int64, replicas int) clusterv1alpha1.ClusterStatus {
	now := metav1.Now()
	n := int64(max(replicas, simRoomReplicas))
	one := replicaRequest()
	// 320 CPUs and 1,280Gi for the default room, as before: more than its
	// replicas ask for, so that only the pods count.
	alloc := corev1.ResourceList{
		corev1.ResourceCPU:    *resource.NewMilliQuantity(max(320_000, n*one.Cpu().MilliValue()), resource.DecimalSI),
		corev1.ResourceMemory: *resource.NewQuantity(max(1280<<30, n*one.Memory().Value()), resource.BinarySI),
		corev1.ResourcePods:   *resource.NewQuantity(n, resource.DecimalSI),
	}
	return clusterv1alpha1.ClusterStatus{
		KubernetesVersion: "v1.36",
		APIEnablements: []clusterv1alpha1.APIEnablement{
			{GroupVersion: "apps/v1", Resources: []clusterv1alpha1.APIResource{{Name: "deployments", Kind: "Deployment"}}},
			{GroupVersion: "v1", Resources: []clusterv1alpha1.APIResource{{Name: "configmaps", Kind: "ConfigMap"}, {Name: "namespaces", Kind: "Namespace"}}},
		},
		Conditions: []metav1.Condition{{Type: clusterv1alpha1.ClusterConditionReady, Status: metav1.ConditionTrue, Reason: "Ready",
			Message: "simulated member", LastTransitionTime: now, ObservedGeneration: generation}},
		NodeSummary:     &clusterv1alpha1.NodeSummary{TotalNum: 20, ReadyNum: 20},
		ResourceSummary: &clusterv1alpha1.ResourceSummary{Allocatable: alloc},
		LastProbeTime:   &now,
	}
}

// renewLeases renews every simulated cluster's Lease each period, spread
// evenly over it, by a pool of workers: independent agents renew in
// parallel, so one slow renewal must not delay the others' (a serial loop
// would stretch the period past the Lease's duration on a busy hub).
func (s *simulator) renewLeases(ctx context.Context) {
	due := make(chan string, len(s.clusters))
	for range simRenewers {
		go func() {
			for name := range due {
				patch := fmt.Sprintf(`{"spec":{"renewTime":%q}}`, metav1.NewMicroTime(time.Now()).Format(metav1.RFC3339Micro))
				l := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: names.ExecutionNamespace(name), Name: clusterv1alpha1.AgentLeaseName}}
				if err := s.hub.Patch(ctx, l, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil && ctx.Err() == nil {
					s.log.Error(err, "renewing a simulated cluster's Lease", "cluster", name)
				}
			}
		}()
	}
	defer close(due)
	tick := time.NewTicker(s.opts.renewPeriod / time.Duration(max(len(s.clusters), 1)))
	defer tick.Stop()
	for i := 0; ; i = (i + 1) % len(s.clusters) {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		select {
		case due <- s.clusters[i]:
		default:
			s.log.Info("Lease renewals fall behind: the hub answers slower than the agents renew", "cluster", s.clusters[i])
		}
	}
}

// needsAck: a Work of a simulated cluster whose spec was not acknowledged
// yet, or that is being deleted.
func needsAck(w *workv1alpha1.Work) bool {
	if !strings.HasPrefix(w.Namespace, names.ExecutionNamespace(simPrefix)) {
		return false
	}
	if !w.DeletionTimestamp.IsZero() {
		return controllerutil.ContainsFinalizer(w, workv1alpha1.FinalizerWork)
	}
	applied := meta.FindStatusCondition(w.Status.Conditions, workv1alpha1.WorkConditionApplied)
	return applied == nil || applied.ObservedGeneration != w.Generation
}

func (s *simulator) work(ctx context.Context) {
	for {
		key, shutdown := s.queue.Get()
		if shutdown {
			return
		}
		if err := s.ack(ctx, key); err != nil && ctx.Err() == nil {
			s.queue.AddRateLimited(key)
		} else {
			s.queue.Forget(key)
		}
		s.queue.Done(key)
	}
}

// ack writes what an agent writes once it applied a Work and its objects
// became ready: Applied, and each Deployment's status with all replicas
// ready and Healthy. A deleted Work is released.
func (s *simulator) ack(ctx context.Context, key types.NamespacedName) error {
	w := &workv1alpha1.Work{}
	if err := s.works.Get(ctx, key, w); err != nil {
		return client.IgnoreNotFound(err)
	}
	if !needsAck(w) {
		return nil
	}
	if !w.DeletionTimestamp.IsZero() {
		orig := w.DeepCopy()
		controllerutil.RemoveFinalizer(w, workv1alpha1.FinalizerWork)
		return client.IgnoreNotFound(s.hub.Patch(ctx, w, client.MergeFrom(orig)))
	}
	orig := w.DeepCopy()
	w.Status.ManifestStatuses = w.Status.ManifestStatuses[:0]
	for i, m := range w.Spec.Workload.Manifests {
		ms, err := simulatedManifestStatus(int32(i), m.Raw)
		if err != nil {
			return err
		}
		w.Status.ManifestStatuses = append(w.Status.ManifestStatuses, ms)
	}
	meta.SetStatusCondition(&w.Status.Conditions, metav1.Condition{Type: workv1alpha1.WorkConditionApplied, Status: metav1.ConditionTrue,
		Reason: "AppliedSuccessful", Message: "applied by a simulated agent", ObservedGeneration: w.Generation})
	return client.IgnoreNotFound(s.hub.Status().Patch(ctx, w, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{})))
}

// simulatedManifestStatus reports the manifest's object as created and
// ready in full.
func simulatedManifestStatus(ordinal int32, raw []byte) (workv1alpha1.ManifestStatus, error) {
	var obj struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Metadata   struct {
			Name      string `json:"name"`
			Namespace string `json:"namespace"`
		} `json:"metadata"`
		Spec struct {
			Replicas *int32 `json:"replicas"`
		} `json:"spec"`
	}
	if err := json.Unmarshal(raw, &obj); err != nil {
		return workv1alpha1.ManifestStatus{}, err
	}
	group, version, _ := strings.Cut(obj.APIVersion, "/")
	if version == "" {
		group, version = "", group
	}
	id := workv1alpha1.ResourceIdentifier{Ordinal: ordinal, Group: group, Version: version, Kind: obj.Kind,
		Resource: strings.ToLower(obj.Kind) + "s", Namespace: obj.Metadata.Namespace, Name: obj.Metadata.Name}
	ms := workv1alpha1.ManifestStatus{Identifier: id, Health: policyv1alpha1.ResourceHealthy, Generation: 1}
	if obj.Spec.Replicas != nil {
		r := *obj.Spec.Replicas
		st, err := json.Marshal(map[string]any{"observedGeneration": 1, "replicas": r, "updatedReplicas": r, "readyReplicas": r, "availableReplicas": r})
		if err != nil {
			return ms, err
		}
		ms.Status = &runtime.RawExtension{Raw: st}
	}
	return ms, nil
}
