package workstatus

import (
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"
)

var podsGVR = schema.GroupVersionResource{Version: "v1", Resource: "pods"}

// pendingPods is a member's informer of its Pending pods (only those:
// field selector status.phase=Pending, so the cache stays as small as the
// backlog of the member's scheduler), and the Works whose workloads'
// pods it watches for: a pod that turns (or stops being) unschedulable
// brings its workload's Work back.
type pendingPods struct {
	informer cache.SharedIndexInformer
	notify   func(types.NamespacedName)

	mu       sync.Mutex
	watchers map[types.NamespacedName]podWatch
}

type podWatch struct {
	namespace string
	selector  labels.Selector
}

func newPendingPods(dc dynamic.Interface, notify func(types.NamespacedName)) *pendingPods {
	inf := dynamicinformer.NewFilteredDynamicInformer(dc, podsGVR, metav1.NamespaceAll, 0,
		cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc},
		func(o *metav1.ListOptions) {
			o.FieldSelector = fields.OneTermEqualSelector("status.phase", string(corev1.PodPending)).String()
		}).Informer()
	_ = inf.SetTransform(dropManagedFields)
	p := &pendingPods{informer: inf, notify: notify, watchers: map[types.NamespacedName]podWatch{}}
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    p.changed,
		UpdateFunc: func(_, o any) { p.changed(o) },
		DeleteFunc: p.changed,
	})
	return p
}

// watch records that the Work's workload has the pods of selector in
// namespace (nil selector: none any more).
func (p *pendingPods) watch(work types.NamespacedName, namespace string, selector labels.Selector) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if selector == nil {
		delete(p.watchers, work)
		return
	}
	p.watchers[work] = podWatch{namespace: namespace, selector: selector}
}

func (p *pendingPods) changed(o any) {
	if d, ok := o.(cache.DeletedFinalStateUnknown); ok {
		o = d.Obj
	}
	u, ok := o.(*unstructured.Unstructured)
	if !ok {
		return
	}
	set := labels.Set(u.GetLabels())
	var works []types.NamespacedName
	p.mu.Lock()
	for k, w := range p.watchers {
		if w.namespace == u.GetNamespace() && w.selector.Matches(set) {
			works = append(works, k)
		}
	}
	p.mu.Unlock()
	for _, k := range works {
		p.notify(k)
	}
}

// matching returns the Pending pods of selector in namespace; synced is
// false until the informer's first list completed.
func (p *pendingPods) matching(namespace string, selector labels.Selector) (pods []*corev1.Pod, synced bool) {
	if !p.informer.HasSynced() {
		return nil, false
	}
	objs, err := p.informer.GetIndexer().ByIndex(cache.NamespaceIndex, namespace)
	if err != nil {
		return nil, true
	}
	pods = make([]*corev1.Pod, 0, len(objs))
	for _, o := range objs {
		u, ok := o.(*unstructured.Unstructured)
		if !ok || !selector.Matches(labels.Set(u.GetLabels())) {
			continue
		}
		pod := &corev1.Pod{}
		if runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, pod) == nil {
			pods = append(pods, pod)
		}
	}
	return pods, true
}

// unschedulable counts the pods a member's scheduler could not place
// (Pending, not bound to a node, not being deleted, PodScheduled=False
// with reason Unschedulable) and returns the oldest such condition's
// lastTransitionTime. A pod waiting for its first scheduling attempt, or
// gated, is not counted: nobody has said it cannot run there.
func unschedulable(pods []*corev1.Pod) (int32, *metav1.Time) {
	var n int32
	var since *metav1.Time
	for _, pod := range pods {
		if pod.Status.Phase != corev1.PodPending || pod.Spec.NodeName != "" || pod.DeletionTimestamp != nil {
			continue
		}
		for _, c := range pod.Status.Conditions {
			if c.Type != corev1.PodScheduled || c.Status != corev1.ConditionFalse || c.Reason != corev1.PodReasonUnschedulable || c.LastTransitionTime.IsZero() {
				continue
			}
			n++
			if since == nil || c.LastTransitionTime.Before(since) {
				t := c.LastTransitionTime
				since = &t
			}
			break
		}
	}
	return n, since
}
