// Package dashboardtest builds dashboard snapshots without a hub: a static
// Source for pure tests, and a synthetic fleet of any size for benchmarks.
// Everything it builds is deterministic.
package dashboardtest

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
	mcv1alpha1 "github.com/shepherd-io/shepherd/api/multicluster/v1alpha1"
	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/dashboard"
	"github.com/shepherd-io/shepherd/pkg/names"
)

// Source serves one snapshot; Changed tells its subscribers it changed.
type Source struct {
	Snap *dashboard.Snapshot
	subs []chan struct{}
}

// Snapshot implements dashboard.Source.
func (s *Source) Snapshot(context.Context) (*dashboard.Snapshot, error) { return s.Snap, nil }

// Subscribe implements dashboard.Source.
func (s *Source) Subscribe() (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	s.subs = append(s.subs, ch)
	return ch, func() {}
}

// Epoch is the clock of synthetic snapshots.
var Epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// Cluster builds a Ready cluster with 32 cores and 128 GiB allocatable.
func Cluster(name, provider, region, zone string) *clusterv1alpha1.Cluster {
	return &clusterv1alpha1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       clusterv1alpha1.ClusterSpec{Provider: provider, Region: region, Zone: zone},
		Status: clusterv1alpha1.ClusterStatus{
			Conditions: []metav1.Condition{{Type: "Ready", Status: metav1.ConditionTrue, Reason: "ClusterReady"}},
			ResourceSummary: &clusterv1alpha1.ResourceSummary{
				Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("32"), corev1.ResourceMemory: resource.MustParse("128Gi")},
				Allocated:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("8"), corev1.ResourceMemory: resource.MustParse("32Gi")},
			},
		},
	}
}

// NodeGroup is count nodes with cpu, memory and pods left each (cpu and
// memory as quantities: "1500m", "8Gi").
func NodeGroup(count int32, cpu, memory string, pods int64) clusterv1alpha1.NodeGroup {
	return clusterv1alpha1.NodeGroup{Count: count, Free: corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(memory),
		corev1.ResourcePods: *resource.NewQuantity(pods, resource.DecimalSI),
	}}
}

// WithNodes sets c's node model to groups, in their order, and returns c.
func WithNodes(c *clusterv1alpha1.Cluster, groups ...clusterv1alpha1.NodeGroup) *clusterv1alpha1.Cluster {
	c.Status.ResourceSummary.Nodes = groups
	return c
}

// Binding builds a scheduled ResourceBinding of a Deployment with its
// targets (cluster name to replicas), each Healthy with all replicas ready.
func Binding(ns, name, policy string, targets ...workv1alpha1.TargetCluster) dashboard.Binding {
	rb := &workv1alpha1.ResourceBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name + "-deployment"},
		Spec: workv1alpha1.BindingSpec{
			Resource:  workv1alpha1.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: ns, Name: name, UID: "uid-" + ns + "-" + name},
			PolicyRef: &workv1alpha1.PolicyReference{Kind: "PropagationPolicy", Namespace: ns, Name: policy},
			Placement: &policyv1alpha1.Placement{ReplicaScheduling: &policyv1alpha1.ReplicaSchedulingStrategy{
				ReplicaSchedulingType: policyv1alpha1.ReplicaSchedulingTypeDivided,
			}},
			Clusters: targets,
		},
		Status: workv1alpha1.BindingStatus{
			LastScheduledTime: &metav1.Time{Time: Epoch},
			Conditions:        []metav1.Condition{{Type: workv1alpha1.ConditionScheduled, Status: metav1.ConditionTrue, Reason: "Success"}},
		},
	}
	for _, t := range targets {
		rb.Spec.Replicas += t.Replicas
		rb.Status.SchedulingDecisions = append(rb.Status.SchedulingDecisions, workv1alpha1.ClusterDecision{
			ClusterName: t.Name, Selected: true, TotalScore: 100, Reason: "selected",
			Scores: []workv1alpha1.PluginScore{{Plugin: "Capacity", Score: 100}},
		})
		rb.Status.AggregatedStatus = append(rb.Status.AggregatedStatus, workv1alpha1.AggregatedStatusItem{
			ClusterName: t.Name, Applied: true, Health: policyv1alpha1.ResourceHealthy,
			Status: &runtime.RawExtension{Raw: []byte(fmt.Sprintf(`{"readyReplicas":%d}`, t.Replicas))},
		})
	}
	return dashboard.Binding{Obj: rb}
}

// Fleet builds a fleet of clusters over 3 providers, 4 regions each and 3
// zones per region, and workloads Deployments of 4 replicas over two
// clusters each, in 20 namespaces under 10 policies, each with its Works
// and five events: the shape of a large fleet, for benchmarks. Every 50th cluster is NotReady and every 40th
// tainted. Every cluster reports its nodes: two groups of two, or, every
// 4th, six nodes of different room (more groups than the pages spell out).
func Fleet(clusters, workloads int) *dashboard.Snapshot {
	s := &dashboard.Snapshot{Now: Epoch}
	providers := []string{"aws", "azure", "gcp"}
	for i := 0; i < clusters; i++ {
		p := providers[i%3]
		region := fmt.Sprintf("%s-region-%d", p, (i/3)%4)
		c := Cluster(fmt.Sprintf("cluster-%04d", i), p, region, fmt.Sprintf("%s-%c", region, 'a'+(i/12)%3))
		if i%50 == 49 {
			c.Status.Conditions[0].Status, c.Status.Conditions[0].Reason = metav1.ConditionFalse, "ClusterNotReachable"
		}
		if i%4 == 3 {
			WithNodes(c, NodeGroup(1, "6", "24Gi", 110), NodeGroup(1, "5", "20Gi", 110), NodeGroup(1, "4", "16Gi", 110),
				NodeGroup(1, "4", "16Gi", 100), NodeGroup(1, "3", "12Gi", 100), NodeGroup(1, "2", "8Gi", 100))
		} else {
			WithNodes(c, NodeGroup(2, "8", "32Gi", 100), NodeGroup(2, "4", "16Gi", 90))
		}
		if i%40 == 39 {
			c.Spec.Taints = []corev1.Taint{{Key: "maintenance", Effect: corev1.TaintEffectNoSchedule}}
		}
		s.Clusters = append(s.Clusters, c)
	}
	for i := 0; i < workloads && clusters > 0; i++ {
		ns := fmt.Sprintf("team-%02d", i%20)
		a, b := i%clusters, (i*7+1)%clusters
		targets := []workv1alpha1.TargetCluster{{Name: s.Clusters[a].Name, Replicas: 2, State: workv1alpha1.TargetBound}}
		if b != a {
			targets = append(targets, workv1alpha1.TargetCluster{Name: s.Clusters[b].Name, Replicas: 2, State: workv1alpha1.TargetBound})
		}
		bd := Binding(ns, fmt.Sprintf("app-%05d", i), fmt.Sprintf("policy-%d", i%10), targets...)
		s.Bindings = append(s.Bindings, bd)
		s.Works = append(s.Works, Works(bd)...)
		s.Events = append(s.Events, Events(bd, 5)...)
	}
	return s
}

// Works are the Applied Works of a binding's targets, named, labelled
// and annotated as the binding controller writes them.
func Works(b dashboard.Binding) []*workv1alpha1.Work {
	r := b.Ref()
	ref := names.BindingRef{Kind: r.Kind(), Namespace: r.Namespace, Name: r.Name}
	var out []*workv1alpha1.Work
	for _, t := range b.Obj.GetBindingSpec().Clusters {
		out = append(out, &workv1alpha1.Work{
			ObjectMeta: metav1.ObjectMeta{Namespace: names.ExecutionNamespace(t.Name), Name: names.WorkName(ref.Namespace, ref.Name),
				Labels: names.WorkLabels(ref, t.Name), Annotations: map[string]string{workv1alpha1.AnnotationBinding: ref.String()}},
			Status: workv1alpha1.WorkStatus{Conditions: []metav1.Condition{{Type: workv1alpha1.WorkConditionApplied, Status: metav1.ConditionTrue, Reason: "AppliedSuccessful"}}},
		})
	}
	return out
}

// Events are n events on a binding, a minute apart from Epoch, recorded
// where a recorder puts them: in the binding's namespace, or default.
func Events(b dashboard.Binding, n int) []*eventsv1.Event {
	ref := b.Ref()
	ns := ref.Namespace
	if ns == "" {
		ns = metav1.NamespaceDefault
	}
	var out []*eventsv1.Event
	for i := 0; i < n; i++ {
		out = append(out, &eventsv1.Event{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("%s.%d", ref.Name, i)},
			Regarding:  corev1.ObjectReference{Kind: ref.Kind(), Namespace: ref.Namespace, Name: ref.Name},
			Reason:     "ScheduleBindingSucceed", Note: "Scheduled", Type: "Normal",
			EventTime: metav1.MicroTime{Time: Epoch.Add(time.Duration(i) * time.Minute)},
		})
	}
	return out
}

// ExportedService builds cluster's export of the ClusterSetIP Service
// ns/name, exported at Epoch with port 80 and endpoints endpoints in one
// slice, in the cluster's execution namespace; ready is the hub's verdict
// (its Ready condition: whether the endpoints are in the import).
func ExportedService(cluster, ns, name string, endpoints int, ready bool) *mcv1alpha1.ExportedService {
	es := &mcv1alpha1.ExportedService{
		ObjectMeta: metav1.ObjectMeta{Namespace: names.ExecutionNamespace(cluster), Name: mcv1alpha1.ExportedServiceName(ns, name)},
		Spec: mcv1alpha1.ExportedServiceSpec{
			Cluster: cluster, Namespace: ns, Name: name, ExportedAt: metav1.Time{Time: Epoch}, Type: mcsv1beta1.ClusterSetIP,
			Ports: []mcsv1beta1.ServicePort{{Name: "http", Port: 80, Protocol: corev1.ProtocolTCP}},
		},
	}
	slice := mcv1alpha1.ExportedEndpointSlice{Name: name + "-1", AddressType: discoveryv1.AddressTypeIPv4}
	for i := 0; i < endpoints; i++ {
		slice.Endpoints = append(slice.Endpoints, discoveryv1.Endpoint{Addresses: []string{fmt.Sprintf("10.0.0.%d", i+1)}})
	}
	es.Spec.EndpointSlices = []mcv1alpha1.ExportedEndpointSlice{slice}
	status, reason := metav1.ConditionTrue, mcsv1beta1.ServiceExportReasonExported
	if !ready {
		status, reason = metav1.ConditionFalse, mcsv1beta1.ServiceExportReasonPending
	}
	es.Status.Conditions = []metav1.Condition{{Type: mcv1alpha1.ConditionReady, Status: status, Reason: string(reason)}}
	return es
}
