package simmember

import (
	"cmp"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/yaml"
)

// The simulated Ray operator (Options.RayOperator) stands in for KubeRay
// in a member, the way kwok stands in for kubelets: it makes a
// RayCluster's pods, so that the member's scheduler places them on its
// nodes and kwok runs them, and nothing more. It runs no Ray, creates no
// head Service, writes no status, does not autoscale and does not replace
// pods whose template changed. For each RayCluster it keeps one head pod
// and, for each worker group, its replicas (within minReplicas and
// maxReplicas) times numOfHosts worker pods, each from the head's or its
// group's pod template, labelled as KubeRay labels them (ray.io/cluster,
// ray.io/node-type, ray.io/group) and controlled by the RayCluster, so the
// garbage collector deletes them with it. It creates the pods missing,
// deletes those beyond the spec and those that finished (to create them
// again), on every change of a RayCluster or of one of its pods.
//
// Pods are named after their place (NAME-head, NAME-GROUP-worker-I) rather
// than by generateName as KubeRay does, so that a repeated or late
// decision can never make one too many.

// rayClusterCRDYAML is the RayCluster CRD the members serve.
//
//go:embed raycluster_crd.yaml
var rayClusterCRDYAML []byte

// RayClusterCRD returns the RayCluster CRD (ray.io/v1) that the members
// with Options.RayOperator serve, a new copy on each call: it names the
// fields the simulated operator reads and keeps any other as given. The
// local fleet's hub serves it too, for RayCluster templates.
func RayClusterCRD() *apiextensionsv1.CustomResourceDefinition {
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.UnmarshalStrict(rayClusterCRDYAML, crd); err != nil {
		// Embedded and decoded by the package's tests: not an input.
		panic(fmt.Sprintf("decoding the embedded RayCluster CRD: %v", err))
	}
	return crd
}

// The labels KubeRay puts on a Ray cluster's pods, and the group name of
// its head.
const (
	rayClusterLabel  = "ray.io/cluster"
	rayNodeTypeLabel = "ray.io/node-type"
	rayGroupLabel    = "ray.io/group"
	rayHeadGroup     = "headgroup"
	rayNodeHead      = "head"
	rayNodeWorker    = "worker"
	// rayOperatorName names the operator's queue, log and client.
	rayOperatorName = "simulated-ray-operator"
	// rayOperatorWorkers sync RayClusters at once.
	rayOperatorWorkers = 2
)

var (
	rayClusterGVR = schema.GroupVersionResource{Group: "ray.io", Version: "v1", Resource: "rayclusters"}
	rayClusterGVK = schema.GroupVersionKind{Group: "ray.io", Version: "v1", Kind: "RayCluster"}
)

// rayClusterSpec is what the simulated operator reads of a RayCluster's
// spec.
type rayClusterSpec struct {
	HeadGroupSpec struct {
		Template corev1.PodTemplateSpec `json:"template"`
	} `json:"headGroupSpec"`
	WorkerGroupSpecs []rayWorkerGroup `json:"workerGroupSpecs"`
}

type rayWorkerGroup struct {
	GroupName   string                 `json:"groupName"`
	Replicas    *int32                 `json:"replicas"`
	MinReplicas *int32                 `json:"minReplicas"`
	MaxReplicas *int32                 `json:"maxReplicas"`
	NumOfHosts  *int32                 `json:"numOfHosts"`
	Template    corev1.PodTemplateSpec `json:"template"`
}

// pods is how many worker pods the group runs: replicas (0 when unset)
// brought within [minReplicas, maxReplicas] (maxReplicas wins when the
// bounds cross), times numOfHosts (1 when unset).
func (g rayWorkerGroup) pods() int {
	value := func(p *int32, def int) int {
		if p == nil {
			return def
		}
		return max(int(*p), 0)
	}
	replicas := value(g.Replicas, 0)
	replicas = max(replicas, value(g.MinReplicas, 0))
	if g.MaxReplicas != nil {
		replicas = min(replicas, value(g.MaxReplicas, 0))
	}
	return replicas * value(g.NumOfHosts, 1)
}

// rayPods decides for one RayCluster, given the pods it controls: the pods
// to create (missing ones) and the pods to delete (beyond its spec, or
// finished so that they are created again). A pod being deleted is
// neither: its name is taken until it is gone, and its deletion brings the
// RayCluster back here. Both lists are in name order.
func rayPods(rc *unstructured.Unstructured, existing []*corev1.Pod) (create, remove []*corev1.Pod, _ error) {
	want, err := rayWantedPods(rc)
	if err != nil {
		return nil, nil, err
	}
	have := make(map[string]*corev1.Pod, len(existing))
	for _, p := range existing {
		have[p.Name] = p
	}
	wanted := make(map[string]bool, len(want))
	for _, p := range want {
		wanted[p.Name] = true
		old, ok := have[p.Name]
		switch {
		case !ok:
			create = append(create, p)
		case old.DeletionTimestamp != nil:
		case old.Status.Phase == corev1.PodSucceeded || old.Status.Phase == corev1.PodFailed:
			remove = append(remove, old)
		}
	}
	for _, p := range existing {
		if !wanted[p.Name] && p.DeletionTimestamp == nil {
			remove = append(remove, p)
		}
	}
	byName := func(a, b *corev1.Pod) int { return cmp.Compare(a.Name, b.Name) }
	slices.SortFunc(create, byName)
	slices.SortFunc(remove, byName)
	return create, remove, nil
}

// rayWantedPods are the pods rc runs: its head, then each worker group's.
func rayWantedPods(rc *unstructured.Unstructured) ([]*corev1.Pod, error) {
	raw, _, err := unstructured.NestedMap(rc.Object, "spec")
	if err != nil {
		return nil, fmt.Errorf("spec: %w", err)
	}
	var spec rayClusterSpec
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(raw, &spec); err != nil {
		return nil, fmt.Errorf("spec: %w", err)
	}
	name := rc.GetName()
	out := []*corev1.Pod{rayPod(rc, name+"-head", rayNodeHead, rayHeadGroup, spec.HeadGroupSpec.Template)}
	seen := map[string]bool{}
	for i, g := range spec.WorkerGroupSpecs {
		switch {
		case g.GroupName == "":
			return nil, fmt.Errorf("spec.workerGroupSpecs[%d].groupName is empty", i)
		case seen[g.GroupName]:
			return nil, fmt.Errorf("spec.workerGroupSpecs[%d].groupName %q is the name of an earlier group", i, g.GroupName)
		}
		seen[g.GroupName] = true
		for j := range g.pods() {
			out = append(out, rayPod(rc, fmt.Sprintf("%s-%s-worker-%d", name, g.GroupName, j), rayNodeWorker, g.GroupName, g.Template))
		}
	}
	return out, nil
}

// rayPod is one pod of rc from template: its labels and annotations, then
// KubeRay's labels, and rc as its controller.
func rayPod(rc *unstructured.Unstructured, name, nodeType, group string, template corev1.PodTemplateSpec) *corev1.Pod {
	podLabels := maps.Clone(template.Labels)
	if podLabels == nil {
		podLabels = map[string]string{}
	}
	podLabels[rayClusterLabel] = rc.GetName()
	podLabels[rayNodeTypeLabel] = nodeType
	podLabels[rayGroupLabel] = group
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:            name,
			Namespace:       rc.GetNamespace(),
			Labels:          podLabels,
			Annotations:     maps.Clone(template.Annotations),
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(rc, rayClusterGVK)},
		},
		Spec: *template.Spec.DeepCopy(),
	}
}

// rayOperator is the simulated Ray operator's controller: RayClusters
// from a dynamic informer, pods from the member's shared pod informer,
// one queue of RayClusters.
type rayOperator struct {
	log      logr.Logger
	client   kubernetes.Interface
	factory  dynamicinformer.DynamicSharedInformerFactory
	clusters cache.GenericLister
	pods     corelisters.PodLister
	synced   []cache.InformerSynced
	queue    workqueue.TypedRateLimitingInterface[cache.ObjectName]
}

// newRayOperator builds the operator, registering its handlers on pods
// (whose informer the caller starts) and on RayClusters (whose informer
// run starts).
func newRayOperator(log logr.Logger, client kubernetes.Interface, dyn dynamic.Interface, pods coreinformers.PodInformer) (*rayOperator, error) {
	factory := dynamicinformer.NewDynamicSharedInformerFactory(dyn, controllerResync)
	clusters := factory.ForResource(rayClusterGVR)
	r := &rayOperator{
		log:      log,
		client:   client,
		factory:  factory,
		clusters: clusters.Lister(),
		pods:     pods.Lister(),
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[cache.ObjectName](),
			workqueue.TypedRateLimitingQueueConfig[cache.ObjectName]{Name: rayOperatorName}),
	}
	enqueue := func(obj any) {
		if key, err := cache.DeletionHandlingObjectToName(obj); err == nil {
			r.queue.Add(key)
		}
	}
	if _, err := clusters.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    enqueue,
		UpdateFunc: func(_, obj any) { enqueue(obj) },
		DeleteFunc: enqueue,
	}); err != nil {
		return nil, fmt.Errorf("watching RayClusters: %w", err)
	}
	// A pod's change brings back the RayCluster controlling it.
	owner := func(obj any) {
		if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = t.Obj
		}
		p, ok := obj.(*corev1.Pod)
		if !ok {
			return
		}
		if ref := metav1.GetControllerOf(p); ref != nil && ref.Kind == rayClusterGVK.Kind && ref.APIVersion == rayClusterGVK.GroupVersion().String() {
			r.queue.Add(cache.ObjectName{Namespace: p.Namespace, Name: ref.Name})
		}
	}
	if _, err := pods.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    owner,
		UpdateFunc: func(_, obj any) { owner(obj) },
		DeleteFunc: owner,
	}); err != nil {
		return nil, fmt.Errorf("watching pods: %w", err)
	}
	r.synced = []cache.InformerSynced{clusters.Informer().HasSynced, pods.Informer().HasSynced}
	return r, nil
}

// run starts the RayCluster informer and works the queue until ctx ends.
func (r *rayOperator) run(ctx context.Context, workers int) {
	defer r.queue.ShutDown()
	r.factory.Start(ctx.Done())
	defer r.factory.Shutdown()
	if !cache.WaitForCacheSync(ctx.Done(), r.synced...) {
		return
	}
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for r.next(ctx) {
			}
		})
	}
	<-ctx.Done()
	r.queue.ShutDown()
	wg.Wait()
}

// next syncs one RayCluster of the queue; false once the queue is shut
// down.
func (r *rayOperator) next(ctx context.Context) bool {
	key, quit := r.queue.Get()
	if quit {
		return false
	}
	defer r.queue.Done(key)
	if err := r.sync(ctx, key); err != nil {
		r.log.V(1).Info("syncing a RayCluster's pods; retrying", "raycluster", key, "err", err)
		r.queue.AddRateLimited(key)
		return true
	}
	r.queue.Forget(key)
	return true
}

// sync creates and deletes the pods of one RayCluster as rayPods decides.
// A RayCluster gone or being deleted is left to the garbage collector.
func (r *rayOperator) sync(ctx context.Context, key cache.ObjectName) error {
	obj, err := r.clusters.ByNamespace(key.Namespace).Get(key.Name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	rc, ok := obj.(*unstructured.Unstructured)
	if !ok || rc.GetDeletionTimestamp() != nil {
		return nil
	}
	listed, err := r.pods.Pods(key.Namespace).List(labels.SelectorFromSet(labels.Set{rayClusterLabel: key.Name}))
	if err != nil {
		return err
	}
	owned := slices.DeleteFunc(listed, func(p *corev1.Pod) bool { return !metav1.IsControlledBy(p, rc) })
	create, remove, err := rayPods(rc, owned)
	if err != nil {
		// Retrying would not change the spec; its next change comes back.
		r.log.Error(err, "cannot make the pods of a RayCluster", "raycluster", key)
		return nil
	}
	var errs []error
	for _, p := range create {
		_, err := r.client.CoreV1().Pods(p.Namespace).Create(ctx, p, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			errs = append(errs, fmt.Errorf("creating pod %s: %w", p.Name, err))
		}
	}
	for _, p := range remove {
		err := r.client.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{Preconditions: metav1.NewUIDPreconditions(string(p.UID))})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			errs = append(errs, fmt.Errorf("deleting pod %s: %w", p.Name, err))
		}
	}
	return errors.Join(errs...)
}
