package simmember

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/informers"
	schedulinginformers "k8s.io/client-go/informers/scheduling/v1alpha2"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/restmapper"
	"k8s.io/controller-manager/pkg/informerfactory"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/controller/deployment"
	"k8s.io/kubernetes/pkg/controller/endpointslice"
	"k8s.io/kubernetes/pkg/controller/garbagecollector"
	"k8s.io/kubernetes/pkg/controller/job"
	"k8s.io/kubernetes/pkg/controller/namespace"
	"k8s.io/kubernetes/pkg/controller/replicaset"
	"k8s.io/kubernetes/pkg/controller/serviceaccount"
	"k8s.io/kubernetes/pkg/controller/statefulset"
	"k8s.io/kubernetes/pkg/features"
)

// Tuning copied from kube-controller-manager's defaults, so that a member
// behaves like a real cluster's control plane.
const (
	// controllerResync is kube-controller-manager's --min-resync-period:
	// controllers are event-driven and resync rarely.
	controllerResync = 12 * time.Hour
	// gcSyncPeriod is how often the garbage collector re-reads discovery to
	// watch new resource types (kube-controller-manager hardcodes 30s).
	gcSyncPeriod          = 30 * time.Second
	namespaceResync       = 5 * time.Minute
	deploymentWorkers     = 5
	replicaSetWorkers     = 5
	statefulSetWorkers    = 5
	jobWorkers            = 5
	gcWorkers             = 20
	namespaceWorkers      = 10
	serviceAccountWorkers = 1
	// endpointSliceWorkers and maxEndpointsPerSlice are the endpointslice
	// controller's recommended defaults; a zero batch period (also the
	// default) writes a Service's slices as soon as its pods change.
	endpointSliceWorkers       = 5
	maxEndpointsPerSlice       = 100
	endpointUpdatesBatchPeriod = 0
	// The namespace deleter's client gets 20x the QPS and 100x the burst
	// of the others: it makes a discovery call and a delete per resource
	// type, which would take many seconds per namespace otherwise.
	namespaceQPSFactor   = 20
	namespaceBurstFactor = 100
)

// controllerRun is a constructed controller waiting to be run until its
// context ends.
type controllerRun struct {
	name string
	run  func(ctx context.Context)
}

// startControllers builds the controllers of kube-controller-manager that a
// member needs for Deployments, StatefulSets and Jobs to run, for deletion
// to cascade and for Services to have endpoints: deployment, replicaset,
// statefulset, job, garbage collector, namespace (deletes a namespace's
// contents), serviceaccount (creates the "default" ServiceAccount, without
// which the apiserver's ServiceAccount admission rejects every pod) and
// endpointslice (lists the pods a Service with a selector selects, with
// their IPs and readiness: multi-cluster Services export these endpoints to
// the other members). Everything else
// (node lifecycle, the legacy Endpoints and EndpointSlice mirroring, quota,
// ...) is left out: nothing in a simulated member needs it. With
// rayOperator, the simulated Ray operator (ray.go) runs beside them.
//
// They are constructed directly, the way kube-controller-manager's
// NewControllerDescriptors constructors do, rather than by running its
// command, which would install signal handlers, parse flags, serve HTTPS and
// do leader election. The controllers run on group until ctx ends; their
// informers are shut down after the last one returns.
func (m *Member) startControllers(ctx context.Context, group *sync.WaitGroup, rayOperator bool) error {
	shared := informers.NewSharedInformerFactoryWithOptions(m.client("shared-informers"), controllerResync,
		informers.WithTransform(trimManagedFields))
	metadataClient, err := metadata.NewForConfig(m.clientConfig("metadata-informers"))
	if err != nil {
		return fmt.Errorf("creating metadata client: %w", err)
	}
	metadataInformers := metadatainformer.NewSharedInformerFactoryWithOptions(metadataClient, controllerResync,
		metadatainformer.WithTransform(trimManagedFields))

	// The garbage collector's graph builder starts informers for resource
	// types it discovers later only once informersStarted is closed, i.e.
	// after the factories have been started, as in kube-controller-manager.
	informersStarted := make(chan struct{})
	runs, err := m.buildControllers(ctx, shared, metadataInformers, metadataClient, informersStarted, rayOperator)
	if err != nil {
		return err
	}

	shared.Start(ctx.Done())
	metadataInformers.Start(ctx.Done())
	close(informersStarted)
	group.Go(func() {
		var wg sync.WaitGroup
		for _, c := range runs {
			wg.Go(func() { c.run(klog.NewContext(ctx, m.upstreamLog.WithName(c.name))) })
		}
		wg.Wait()
		shared.Shutdown()
		metadataInformers.Shutdown()
	})
	return nil
}

// buildControllers constructs every controller with the shared informers.
// Controllers keep the logger of the context they are built with for their
// event handlers, hence one named context each.
func (m *Member) buildControllers(ctx context.Context, shared informers.SharedInformerFactory,
	metadataInformers metadatainformer.SharedInformerFactory, metadataClient metadata.Interface,
	informersStarted <-chan struct{}, rayOperator bool) ([]controllerRun, error) {
	named := func(name string) context.Context {
		return klog.NewContext(ctx, m.upstreamLog.WithName(name))
	}
	var runs []controllerRun
	add := func(name string, run func(context.Context)) { runs = append(runs, controllerRun{name, run}) }

	dc, err := deployment.NewDeploymentController(named("deployment-controller"),
		shared.Apps().V1().Deployments(), shared.Apps().V1().ReplicaSets(), shared.Core().V1().Pods(),
		m.client("deployment-controller"))
	if err != nil {
		return nil, fmt.Errorf("creating deployment controller: %w", err)
	}
	add("deployment-controller", func(ctx context.Context) { dc.Run(ctx, deploymentWorkers) })

	rsc := replicaset.NewReplicaSetController(
		klog.NewContext(ctx, withoutDuplicateMetricsErrors(m.upstreamLog.WithName("replicaset-controller"))),
		shared.Apps().V1().ReplicaSets(), shared.Core().V1().Pods(),
		m.client("replicaset-controller"), replicaset.BurstReplicas)
	add("replicaset-controller", func(ctx context.Context) { rsc.Run(ctx, replicaSetWorkers) })

	ssc := statefulset.NewStatefulSetController(named("statefulset-controller"),
		shared.Core().V1().Pods(), shared.Apps().V1().StatefulSets(),
		shared.Core().V1().PersistentVolumeClaims(), shared.Apps().V1().ControllerRevisions(),
		m.client("statefulset-controller"))
	add("statefulset-controller", func(ctx context.Context) { ssc.Run(ctx, statefulSetWorkers) })

	// Same condition as kube-controller-manager: the alpha Workload API is
	// only watched when its feature gate is on.
	var workloads schedulinginformers.WorkloadInformer
	var podGroups schedulinginformers.PodGroupInformer
	if utilfeature.DefaultFeatureGate.Enabled(features.WorkloadWithJob) {
		workloads = shared.Scheduling().V1alpha2().Workloads()
		podGroups = shared.Scheduling().V1alpha2().PodGroups()
	}
	jc, err := job.NewController(named("job-controller"), m.client("job-controller"),
		shared.Core().V1().Pods(), shared.Batch().V1().Jobs(), workloads, podGroups)
	if err != nil {
		return nil, fmt.Errorf("creating job controller: %w", err)
	}
	add("job-controller", func(ctx context.Context) { jc.Run(ctx, jobWorkers) })

	sac, err := serviceaccount.NewServiceAccountsController(m.upstreamLog.WithName("serviceaccount-controller"),
		shared.Core().V1().ServiceAccounts(), shared.Core().V1().Namespaces(),
		m.client("serviceaccount-controller"), serviceaccount.DefaultServiceAccountsControllerOptions())
	if err != nil {
		return nil, fmt.Errorf("creating serviceaccount controller: %w", err)
	}
	add("serviceaccount-controller", func(ctx context.Context) { sac.Run(ctx, serviceAccountWorkers) })

	// The node informer is what kube-controller-manager gives it too: the
	// controller reads nodes for topology hints and zone labels.
	esc := endpointslice.NewController(named("endpointslice-controller"),
		shared.Core().V1().Pods(), shared.Core().V1().Services(), shared.Core().V1().Nodes(),
		shared.Discovery().V1().EndpointSlices(), maxEndpointsPerSlice,
		m.client("endpointslice-controller"), endpointUpdatesBatchPeriod)
	add("endpointslice-controller", func(ctx context.Context) { esc.Run(ctx, endpointSliceWorkers) })

	nsRun, err := m.buildNamespaceController(named("namespace-controller"), shared)
	if err != nil {
		return nil, err
	}
	add("namespace-controller", nsRun)

	gcRun, err := m.buildGarbageCollector(named("garbage-collector-controller"),
		informerfactory.NewInformerFactory(shared, metadataInformers), metadataClient, informersStarted)
	if err != nil {
		return nil, err
	}
	add("garbage-collector-controller", gcRun)

	if rayOperator {
		dyn, err := dynamic.NewForConfig(m.clientConfig(rayOperatorName))
		if err != nil {
			return nil, fmt.Errorf("creating %s client: %w", rayOperatorName, err)
		}
		// Its errors are the member's own, not an upstream component's.
		ray, err := newRayOperator(m.log.WithName(rayOperatorName), m.client(rayOperatorName), dyn, shared.Core().V1().Pods())
		if err != nil {
			return nil, err
		}
		add(rayOperatorName, func(ctx context.Context) { ray.run(ctx, rayOperatorWorkers) })
	}
	return runs, nil
}

// buildNamespaceController wires the namespace deleter like
// kube-controller-manager: its own client with a much higher rate limit,
// since it issues a discovery call and a delete per resource type.
func (m *Member) buildNamespaceController(ctx context.Context, shared informers.SharedInformerFactory) (func(context.Context), error) {
	cfg := m.clientConfig("namespace-controller")
	cfg.QPS *= namespaceQPSFactor
	cfg.Burst *= namespaceBurstFactor
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("creating namespace-controller client: %w", err)
	}
	metadataClient, err := metadata.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("creating namespace-controller metadata client: %w", err)
	}
	nc := namespace.NewNamespaceController(ctx, client, metadataClient,
		client.Discovery().ServerPreferredNamespacedResources,
		shared.Core().V1().Namespaces(), namespaceResync, corev1.FinalizerKubernetes)
	return func(ctx context.Context) { nc.Run(ctx, namespaceWorkers) }, nil
}

// buildGarbageCollector wires the garbage collector like
// kube-controller-manager: a dependency graph fed by metadata informers for
// every deletable resource, a RESTMapper over cached discovery, and a
// separate discovery client for the periodic resync (sharing it would
// invalidate the mapper's cache on every resync).
func (m *Member) buildGarbageCollector(ctx context.Context, factory informerfactory.InformerFactory,
	metadataClient metadata.Interface, informersStarted <-chan struct{}) (func(context.Context), error) {
	mapperDiscovery, err := discovery.NewDiscoveryClientForConfig(m.clientConfig("controller-discovery"))
	if err != nil {
		return nil, fmt.Errorf("creating discovery client: %w", err)
	}
	syncDiscovery, err := discovery.NewDiscoveryClientForConfig(m.clientConfig("garbage-collector-discovery"))
	if err != nil {
		return nil, fmt.Errorf("creating discovery client: %w", err)
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(mapperDiscovery))

	graph := garbagecollector.NewDependencyGraphBuilder(ctx, metadataClient, mapper,
		garbagecollector.DefaultIgnoredResources(), factory, informersStarted)
	gc, err := garbagecollector.NewComposedGarbageCollector(ctx, m.client("generic-garbage-collector"),
		metadataClient, mapper, graph)
	if err != nil {
		return nil, fmt.Errorf("creating garbage collector: %w", err)
	}
	return func(ctx context.Context) {
		var wg sync.WaitGroup
		wg.Go(func() { gc.Run(ctx, gcWorkers, gcSyncPeriod) })
		wg.Go(func() { gc.Sync(ctx, syncDiscovery, gcSyncPeriod) })
		wg.Wait()
	}, nil
}

// trimManagedFields drops managedFields from cached objects, as
// kube-controller-manager does: no controller reads them and they are a
// large share of every object's memory.
func trimManagedFields(obj any) (any, error) {
	if accessor, err := meta.Accessor(obj); err == nil && accessor.GetManagedFields() != nil {
		accessor.SetManagedFields(nil)
	}
	return obj, nil
}
