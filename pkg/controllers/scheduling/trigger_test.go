package scheduling

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/placement"
	"github.com/shepherd-io/shepherd/pkg/scheduler/framework"
)

var (
	t0 = metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	t1 = metav1.NewTime(t0.Add(time.Minute))
)

func divided() *policyv1alpha1.Placement {
	return &policyv1alpha1.Placement{ReplicaScheduling: &policyv1alpha1.ReplicaSchedulingStrategy{
		ReplicaSchedulingType: policyv1alpha1.ReplicaSchedulingTypeDivided,
	}}
}

// scheduled returns a binding as the scheduler leaves it after placing
// replicas on targets.
func scheduled(replicas int32, placement *policyv1alpha1.Placement, targets ...workv1alpha1.TargetCluster) *workv1alpha1.ResourceBinding {
	b := &workv1alpha1.ResourceBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web-deployment", Generation: 3},
		Spec:       workv1alpha1.BindingSpec{Replicas: replicas, Placement: placement, Clusters: targets},
	}
	b.Annotations = map[string]string{workv1alpha1.AnnotationScheduledHash: SchedulingHash(&b.Spec)}
	b.Status.LastScheduledTime = &t0
	b.Status.Conditions = []metav1.Condition{{Type: workv1alpha1.ConditionScheduled, Status: metav1.ConditionTrue, Reason: ReasonSuccess}}
	return b
}

func snapshot(t *testing.T, clusters ...framework.ClusterInfo) *framework.Snapshot {
	t.Helper()
	s, err := framework.NewSnapshot(clusters)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// unclaimed marks b as a binding whose policy was deleted.
func unclaimed(b *workv1alpha1.ResourceBinding) *workv1alpha1.ResourceBinding {
	b.Status.Conditions = append(b.Status.Conditions, metav1.Condition{Type: workv1alpha1.ConditionClaimed, Status: metav1.ConditionFalse, Reason: workv1alpha1.ReasonPolicyDeleted})
	return b
}

func TestDecide(t *testing.T) {
	fleet := snapshot(t, framework.ClusterInfo{Name: "a"}, framework.ClusterInfo{Name: "b"}, framework.ClusterInfo{Name: "c", Deleting: true})
	ab := []workv1alpha1.TargetCluster{{Name: "a", Replicas: 3, State: workv1alpha1.TargetBound}, {Name: "b", Replicas: 3}}
	tests := []struct {
		name   string
		b      *workv1alpha1.ResourceBinding
		mutate func(b *workv1alpha1.ResourceBinding)
		want   Trigger
	}{
		{name: "steady", b: scheduled(6, divided(), ab...), want: TriggerNone},
		{name: "never scheduled", b: &workv1alpha1.ResourceBinding{Spec: workv1alpha1.BindingSpec{Replicas: 1}}, want: TriggerNew},
		{name: "template edit bumps the resource version and generation", b: scheduled(6, divided(), ab...), want: TriggerNone,
			mutate: func(b *workv1alpha1.ResourceBinding) {
				b.Spec.Resource.ResourceVersion = "99"
				b.Generation++
				b.Spec.ReplicaRequirements = &workv1alpha1.ReplicaRequirements{ResourceRequest: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}
			}},
		{name: "binding controller moves states and drops unscheduled targets", b: scheduled(6, divided(), append(ab, workv1alpha1.TargetCluster{Name: "x", Replicas: 2, State: workv1alpha1.TargetUnscheduled})...), want: TriggerNone,
			mutate: func(b *workv1alpha1.ResourceBinding) {
				b.Spec.Clusters = []workv1alpha1.TargetCluster{{Name: "a", Replicas: 3, State: workv1alpha1.TargetBound}, {Name: "b", Replicas: 3, State: workv1alpha1.TargetBound}}
			}},
		{name: "replicas changed", b: scheduled(6, divided(), ab...), want: TriggerChanged,
			mutate: func(b *workv1alpha1.ResourceBinding) { b.Spec.Replicas = 9 }},
		{name: "placement changed", b: scheduled(6, divided(), ab...), want: TriggerChanged,
			mutate: func(b *workv1alpha1.ResourceBinding) {
				b.Spec.Placement.ClusterAffinity = &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"a"}}
			}},
		{name: "a target evicted", b: scheduled(6, divided(), ab...), want: TriggerChanged,
			mutate: func(b *workv1alpha1.ResourceBinding) { b.Spec.Clusters = b.Spec.Clusters[:1] }},
		{name: "reschedule requested", b: scheduled(6, divided(), ab...), want: TriggerReschedule,
			mutate: func(b *workv1alpha1.ResourceBinding) { b.Spec.RescheduleTriggeredAt = &t1 }},
		{name: "reschedule already done", b: scheduled(6, divided(), ab...), want: TriggerNone,
			mutate: func(b *workv1alpha1.ResourceBinding) {
				b.Spec.RescheduleTriggeredAt = &t0
				b.Status.LastScheduledTime = &t1
			}},
		{name: "reschedule in the second of the last scheduling", b: scheduled(6, divided(), ab...), want: TriggerReschedule,
			mutate: func(b *workv1alpha1.ResourceBinding) { b.Spec.RescheduleTriggeredAt = &t0 }},
		{name: "reschedule in the same second, served", b: scheduled(6, divided(), ab...), want: TriggerNone,
			mutate: func(b *workv1alpha1.ResourceBinding) {
				b.Spec.RescheduleTriggeredAt = &t0
				b.Annotations[workv1alpha1.AnnotationRescheduleObserved] = t0.UTC().Format(time.RFC3339)
			}},
		{name: "reschedule in the same second, an earlier stamp served", b: scheduled(6, divided(), ab...), want: TriggerReschedule,
			mutate: func(b *workv1alpha1.ResourceBinding) {
				b.Spec.RescheduleTriggeredAt = &t0
				b.Annotations[workv1alpha1.AnnotationRescheduleObserved] = t0.Add(-time.Second).UTC().Format(time.RFC3339)
			}},
		{name: "last attempt failed", b: scheduled(6, divided(), ab...), want: TriggerRetry,
			mutate: func(b *workv1alpha1.ResourceBinding) { b.Status.Conditions[0].Status = metav1.ConditionFalse }},
		{name: "target cluster deleted", b: scheduled(6, divided(), workv1alpha1.TargetCluster{Name: "gone", Replicas: 6}), want: TriggerClusterGone},
		{name: "target cluster being deleted", b: scheduled(6, divided(), workv1alpha1.TargetCluster{Name: "c", Replicas: 6}), want: TriggerClusterGone},
		{name: "unclaimed keeps its placement though its target cluster is gone", b: unclaimed(scheduled(6, divided(), workv1alpha1.TargetCluster{Name: "gone", Replicas: 6})), want: TriggerNone},
		{name: "unclaimed keeps its placement though replicas changed", want: TriggerNone,
			b: func() *workv1alpha1.ResourceBinding {
				b := unclaimed(scheduled(6, divided(), ab...))
				b.Spec.Replicas = 9
				return b
			}()},
		{name: "unclaimed duplicated everywhere does not check the fleet", b: unclaimed(scheduled(2, nil, workv1alpha1.TargetCluster{Name: "a", Replicas: 2})), want: TriggerNone},
		{name: "claimed again follows its policy", b: scheduled(6, divided(), ab...), want: TriggerChanged,
			mutate: func(b *workv1alpha1.ResourceBinding) {
				b.Status.Conditions = append(b.Status.Conditions, metav1.Condition{Type: workv1alpha1.ConditionClaimed, Status: metav1.ConditionTrue})
				b.Spec.Replicas = 9
			}},
		{name: "unclaimed but never placed is placed", b: unclaimed(&workv1alpha1.ResourceBinding{Spec: workv1alpha1.BindingSpec{Replicas: 1}}), want: TriggerNew},
		{name: "claimed again wakes the scheduler", b: unclaimed(scheduled(6, divided(), workv1alpha1.TargetCluster{Name: "gone", Replicas: 6})), want: TriggerClusterGone,
			mutate: func(b *workv1alpha1.ResourceBinding) {
				meta.SetStatusCondition(&b.Status.Conditions, metav1.Condition{Type: workv1alpha1.ConditionClaimed, Status: metav1.ConditionTrue, Reason: workv1alpha1.ReasonPolicyClaimed})
			}},
		{name: "unscheduled target on a deleted cluster", b: scheduled(6, divided(),
			workv1alpha1.TargetCluster{Name: "a", Replicas: 6}, workv1alpha1.TargetCluster{Name: "gone", Replicas: 6, State: workv1alpha1.TargetUnscheduled}), want: TriggerNone},
		{name: "duplicated everywhere checks the fleet", b: scheduled(2, nil, workv1alpha1.TargetCluster{Name: "a", Replicas: 2}), want: TriggerFleetChanged},
		{name: "no replicas everywhere checks the fleet", b: scheduled(0, divided(), workv1alpha1.TargetCluster{Name: "a"}), want: TriggerFleetChanged},
		{name: "a term with overflow checks for room returning", want: TriggerOverflow, b: scheduled(6, divided(), ab...),
			mutate: func(b *workv1alpha1.ResourceBinding) {
				b.Spec.Placement.ClusterAffinities = []policyv1alpha1.ClusterAffinityTerm{{AffinityName: "dc",
					ClusterAffinity:    policyv1alpha1.ClusterAffinity{ClusterNames: []string{"a"}},
					OverflowAffinities: []policyv1alpha1.OverflowClusterAffinity{{AffinityName: "cloud", ClusterAffinity: policyv1alpha1.ClusterAffinity{ClusterNames: []string{"b"}}}}}}
				b.Annotations[workv1alpha1.AnnotationScheduledHash] = SchedulingHash(&b.Spec)
			}},
		{name: "a fallback term without overflow in force", want: TriggerNone, b: scheduled(6, divided(), ab...),
			mutate: func(b *workv1alpha1.ResourceBinding) {
				b.Spec.Placement.ClusterAffinities = []policyv1alpha1.ClusterAffinityTerm{{AffinityName: "dc",
					ClusterAffinity:    policyv1alpha1.ClusterAffinity{ClusterNames: []string{"a"}},
					OverflowAffinities: []policyv1alpha1.OverflowClusterAffinity{{AffinityName: "cloud", ClusterAffinity: policyv1alpha1.ClusterAffinity{ClusterNames: []string{"b"}}}}},
					{AffinityName: "all"}}
				b.Status.ObservedAffinityName = "all"
				b.Annotations[workv1alpha1.AnnotationScheduledHash] = SchedulingHash(&b.Spec)
			}},
		{name: "duplicated with a bounded spread", want: TriggerNone,
			b: scheduled(2, &policyv1alpha1.Placement{SpreadConstraints: []policyv1alpha1.SpreadConstraint{{SpreadByField: policyv1alpha1.SpreadByFieldCluster, MinGroups: 1, MaxGroups: ptr.To[int32](2)}}},
				workv1alpha1.TargetCluster{Name: "a", Replicas: 2})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.mutate != nil {
				old := tt.b.DeepCopy()
				tt.mutate(tt.b)
				// An update wakes the scheduler exactly when it changes
				// something the scheduler acts on.
				wantWake := tt.want == TriggerChanged || strings.HasPrefix(tt.name, "reschedule") || strings.Contains(tt.name, "overflow") ||
					strings.Contains(tt.name, "wakes")
				if changed := inputsChanged(old, tt.b); changed != wantWake {
					t.Errorf("inputsChanged = %v, want %v", changed, wantWake)
				}
			}
			if got := Decide(tt.b, fleet); got != tt.want {
				t.Fatalf("Decide = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestSchedulingHashIgnoresOrderAndState(t *testing.T) {
	a := workv1alpha1.BindingSpec{Replicas: 4, Placement: divided(), Clusters: []workv1alpha1.TargetCluster{
		{Name: "a", Replicas: 1}, {Name: "b", Replicas: 3, State: workv1alpha1.TargetBound}}}
	b := workv1alpha1.BindingSpec{Replicas: 4, Placement: divided(), Clusters: []workv1alpha1.TargetCluster{
		{Name: "b", Replicas: 3, State: workv1alpha1.TargetScheduled}, {Name: "z", State: workv1alpha1.TargetUnscheduled}, {Name: "a", Replicas: 1, State: workv1alpha1.TargetBound}}}
	if SchedulingHash(&a) != SchedulingHash(&b) {
		t.Fatal("hash depends on target order, state or unscheduled targets")
	}
	b.Clusters[0].Replicas = 2
	if SchedulingHash(&a) == SchedulingHash(&b) {
		t.Fatal("hash ignores target replicas")
	}
}

func TestInputsChangedBySchedulerName(t *testing.T) {
	old := scheduled(1, nil)
	n := old.DeepCopy()
	n.Spec.SchedulerName = "other"
	if !inputsChanged(old, n) {
		t.Fatal("a new scheduler name is not an input change")
	}
	n = old.DeepCopy()
	n.Status.SchedulingDecisions = []workv1alpha1.ClusterDecision{{ClusterName: "a"}}
	n.Status.Conditions = nil
	if inputsChanged(old, n) {
		t.Fatal("a status write is an input change")
	}
}

func TestClassify(t *testing.T) {
	base := &clusterv1alpha1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: "a", Generation: 1, Labels: map[string]string{"env": "prod"}},
		Status: clusterv1alpha1.ClusterStatus{
			Conditions:      []metav1.Condition{{Type: clusterv1alpha1.ClusterConditionReady, Status: metav1.ConditionTrue}},
			ResourceSummary: &clusterv1alpha1.ResourceSummary{Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("8")}},
		},
	}
	tests := []struct {
		name   string
		mutate func(c *clusterv1alpha1.Cluster)
		want   clusterChange
	}{
		{name: "nothing", mutate: func(*clusterv1alpha1.Cluster) {}},
		{name: "not ready", mutate: func(c *clusterv1alpha1.Cluster) { c.Status.Conditions[0].Status = metav1.ConditionFalse }},
		{name: "usage", mutate: func(c *clusterv1alpha1.Cluster) {
			c.Status.ResourceSummary.Allocated = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}
		}},
		{name: "labels", want: changeEligibility, mutate: func(c *clusterv1alpha1.Cluster) { c.Labels["env"] = "dev" }},
		{name: "spec (taints)", want: changeEligibility, mutate: func(c *clusterv1alpha1.Cluster) { c.Generation++ }},
		{name: "apis", want: changeEligibility, mutate: func(c *clusterv1alpha1.Cluster) {
			c.Status.APIEnablements = []clusterv1alpha1.APIEnablement{{GroupVersion: "v1"}}
		}},
		{name: "allocatable", want: changeCapacity, mutate: func(c *clusterv1alpha1.Cluster) {
			c.Status.ResourceSummary.Allocatable[corev1.ResourceCPU] = resource.MustParse("16")
		}},
		{name: "deleting", want: changeGone, mutate: func(c *clusterv1alpha1.Cluster) { c.DeletionTimestamp = &t0 }},
	}
	for _, tt := range tests {
		n := base.DeepCopy()
		tt.mutate(n)
		if got := classify(base, n); got != tt.want {
			t.Errorf("%s: classify = %b, want %b", tt.name, got, tt.want)
		}
	}
}

// TestRescheduleServedIgnoresSubseconds: the API keeps whole seconds, so a
// stamp and a lastScheduledTime read back from it compare in seconds even
// when one of them still holds the nanoseconds of the writer's clock.
func TestRescheduleServedIgnoresSubseconds(t *testing.T) {
	b := scheduled(1, nil)
	b.Status.LastScheduledTime = &metav1.Time{Time: t0.Add(700 * time.Millisecond)}
	at := metav1.NewTime(t0.Add(300 * time.Millisecond))
	if placement.RescheduleServed(b, at) {
		t.Fatal("a stamp in the second of the last scheduling is served without the annotation")
	}
	b.Annotations[workv1alpha1.AnnotationRescheduleObserved] = t0.UTC().Format(time.RFC3339)
	if !placement.RescheduleServed(b, at) {
		t.Fatal("a stamp recorded as served is pending")
	}
	if placement.RescheduleServed(b, t1) {
		t.Fatal("a later stamp is served")
	}
	b.Status.LastScheduledTime = nil
	if placement.RescheduleServed(b, at) {
		t.Fatal("a never scheduled binding served a stamp")
	}
}
