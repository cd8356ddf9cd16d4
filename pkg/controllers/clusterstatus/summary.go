package clusterstatus

import (
	"context"
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	resourcehelper "k8s.io/component-helpers/resource"

	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/clusterclient"
)

// summarizers holds one node/pod informer pair per member. They start on a
// member's first probe, restart when its clients change (new endpoint or
// credentials) and stop when its Cluster goes or the manager stops.
type summarizers struct {
	mu sync.Mutex
	m  map[string]*summarizer
}

type summarizer struct {
	clients *clusterclient.Clients
	factory informers.SharedInformerFactory
	nodes   corelisters.NodeLister
	pods    corelisters.PodLister
	synced  []cache.InformerSynced
	cancel  context.CancelFunc
}

func newSummarizers() *summarizers { return &summarizers{m: map[string]*summarizer{}} }

// get returns the running summarizer for the member of c, starting one if
// needed.
func (s *summarizers) get(c *clusterclient.Clients) (*summarizer, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if cur, ok := s.m[c.Cluster]; ok {
		if cur.clients == c {
			return cur, nil
		}
		cur.stop()
	}
	kc, err := kubernetes.NewForConfig(c.WatchConfig())
	if err != nil {
		return nil, err
	}
	f := informers.NewSharedInformerFactoryWithOptions(kc, 0, informers.WithTransform(strip))
	sum := &summarizer{
		clients: c,
		factory: f,
		nodes:   f.Core().V1().Nodes().Lister(),
		pods:    f.Core().V1().Pods().Lister(),
		synced:  []cache.InformerSynced{f.Core().V1().Nodes().Informer().HasSynced, f.Core().V1().Pods().Informer().HasSynced},
	}
	ctx, cancel := context.WithCancel(context.Background())
	sum.cancel = cancel
	f.Start(ctx.Done())
	s.m[c.Cluster] = sum
	return sum, nil
}

// stop stops the member's informers, if any.
func (s *summarizers) stop(cluster string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if cur, ok := s.m[cluster]; ok {
		cur.stop()
		delete(s.m, cluster)
	}
}

// stopAll stops every member's informers; the manager calls it on shutdown.
func (s *summarizers) stopAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for name, cur := range s.m {
		cur.stop()
		delete(s.m, name)
	}
}

func (s *summarizer) stop() {
	s.cancel()
	s.factory.Shutdown()
}

// summarize waits (bounded by ctx) for the informers to sync, then sums
// the cached nodes and pods.
func (s *summarizer) summarize(ctx context.Context) (*clusterv1alpha1.NodeSummary, *clusterv1alpha1.ResourceSummary, error) {
	if !cache.WaitForCacheSync(ctx.Done(), s.synced...) {
		return nil, nil, fmt.Errorf("node and pod informers not synced yet")
	}
	nodes, err := s.nodes.List(labels.Everything())
	if err != nil {
		return nil, nil, err
	}
	pods, err := s.pods.List(labels.Everything())
	if err != nil {
		return nil, nil, err
	}
	n, r := summarize(nodes, pods)
	return n, r, nil
}

// summarize computes the node summary and the resource summary:
// allocatable sums the Ready nodes' allocatable; allocated sums the
// requests of pods bound to a node that have not finished; allocating sums
// those of unfinished pods not bound yet; nodes is the node model (see
// nodes.go). Pod counts go in as the "pods"
// resource, so that a node's pod capacity can be compared with them.
func summarize(nodes []*corev1.Node, pods []*corev1.Pod) (*clusterv1alpha1.NodeSummary, *clusterv1alpha1.ResourceSummary) {
	ns := &clusterv1alpha1.NodeSummary{TotalNum: int32(len(nodes))}
	rs := &clusterv1alpha1.ResourceSummary{Allocatable: corev1.ResourceList{}, Allocated: corev1.ResourceList{}, Allocating: corev1.ResourceList{}}
	for _, n := range nodes {
		if nodeReady(n) {
			ns.ReadyNum++
			add(rs.Allocatable, n.Status.Allocatable)
		}
	}
	one := corev1.ResourceList{corev1.ResourcePods: *resource.NewQuantity(1, resource.DecimalSI)}
	onNode := map[string][]corev1.ResourceList{}
	var unbound []corev1.ResourceList
	for _, p := range pods {
		if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		req := resourcehelper.PodRequests(p, resourcehelper.PodResourcesOptions{})
		target := rs.Allocating
		if p.Spec.NodeName != "" {
			target = rs.Allocated
			onNode[p.Spec.NodeName] = append(onNode[p.Spec.NodeName], req)
		} else {
			unbound = append(unbound, req)
		}
		add(target, req)
		add(target, one)
	}
	// The node model: the room of every node new replicas may land on.
	rooms := make([]nodeRoom, 0, len(nodes))
	for _, n := range nodes {
		if takesNewPods(n) {
			rooms = append(rooms, freeRoom(n.Status.Allocatable, onNode[n.Name]))
		}
	}
	takeUnbound(rooms, unbound)
	rs.Nodes = nodeGroups(rooms, clusterv1alpha1.MaxNodeGroups)
	for _, l := range []corev1.ResourceList{rs.Allocatable, rs.Allocated, rs.Allocating} {
		for name, q := range l {
			// Canonical form, so that equal sums compare and print equal.
			l[name] = resource.MustParse(q.String())
		}
	}
	return ns, rs
}

func add(dst, src corev1.ResourceList) {
	for name, q := range src {
		sum := dst[name]
		sum.Add(q)
		dst[name] = sum
	}
}

// conditionTaints are the taints Kubernetes puts on a node for its
// conditions (the node lifecycle controller and kubelet). Ordinary pods do
// not tolerate them, except that every pod is admitted with a toleration of
// not-ready and unreachable with effect NoExecute (for 300 s), so those two
// keep new pods off only with effect NoSchedule, which the lifecycle
// controller puts beside them. A node carrying one that keeps new pods off
// takes no new replica, whatever its Ready condition says: the lifecycle
// controller taints a node a moment before or after it flips the
// condition, and kubelet's pressure taints come with a Ready node. Taints a
// person puts on a node are not here: some workloads tolerate them, and
// which ones the model cannot tell.
var conditionTaints = map[string]struct{ noExecuteTolerated bool }{
	corev1.TaintNodeNotReady:           {noExecuteTolerated: true},
	corev1.TaintNodeUnreachable:        {noExecuteTolerated: true},
	corev1.TaintNodeUnschedulable:      {},
	corev1.TaintNodeMemoryPressure:     {},
	corev1.TaintNodeDiskPressure:       {},
	corev1.TaintNodePIDPressure:        {},
	corev1.TaintNodeNetworkUnavailable: {},
}

// takesNewPods says whether new replicas may land on a node: Ready, not
// cordoned (a drained node's room is gone), and without a condition taint
// that keeps new pods off.
func takesNewPods(n *corev1.Node) bool {
	if !nodeReady(n) || n.Spec.Unschedulable {
		return false
	}
	for _, t := range n.Spec.Taints {
		c, ok := conditionTaints[t.Key]
		if !ok {
			continue
		}
		if t.Effect == corev1.TaintEffectNoSchedule || (t.Effect == corev1.TaintEffectNoExecute && !c.noExecuteTolerated) {
			return false
		}
	}
	return true
}

func nodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// strip keeps only what summarize reads, so that caching every pod of a
// large member stays cheap.
func strip(obj any) (any, error) {
	switch o := obj.(type) {
	case *corev1.Pod:
		p := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: o.Namespace, Name: o.Name, UID: o.UID, ResourceVersion: o.ResourceVersion},
			Spec:       corev1.PodSpec{NodeName: o.Spec.NodeName, Overhead: o.Spec.Overhead, Resources: o.Spec.Resources},
			Status:     corev1.PodStatus{Phase: o.Status.Phase},
		}
		for _, c := range o.Spec.InitContainers {
			p.Spec.InitContainers = append(p.Spec.InitContainers, corev1.Container{Name: c.Name, Resources: c.Resources, RestartPolicy: c.RestartPolicy})
		}
		for _, c := range o.Spec.Containers {
			p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: c.Name, Resources: c.Resources})
		}
		return p, nil
	case *corev1.Node:
		n := &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: o.Name, UID: o.UID, ResourceVersion: o.ResourceVersion},
			Spec:       corev1.NodeSpec{Unschedulable: o.Spec.Unschedulable},
			Status:     corev1.NodeStatus{Allocatable: o.Status.Allocatable},
		}
		for _, t := range o.Spec.Taints {
			if _, ok := conditionTaints[t.Key]; ok {
				n.Spec.Taints = append(n.Spec.Taints, corev1.Taint{Key: t.Key, Effect: t.Effect})
			}
		}
		for _, c := range o.Status.Conditions {
			if c.Type == corev1.NodeReady {
				n.Status.Conditions = []corev1.NodeCondition{{Type: c.Type, Status: c.Status}}
			}
		}
		return n, nil
	}
	return obj, nil
}
