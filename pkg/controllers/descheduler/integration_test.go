package descheduler_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/controllers/descheduler"
	"github.com/shepherd-io/shepherd/pkg/names"
	"github.com/shepherd-io/shepherd/test/testenv"
)

const timeout = 30 * time.Second

var components = []workv1alpha1.TargetComponent{{Name: "head", Replicas: 1}, {Name: "workers", Replicas: 2}}

// TestGangMovedWhole: a gang Bound on two clusters whose replicas stay
// unschedulable in one of them is moved off that one whole once the
// threshold passes, nothing lowered: the target Unscheduled, the eviction
// history and graceful eviction task written through the API, the old
// copy's Work kept, the condition and event saying so, and naming the
// component whose pods do not fit when the cluster reports it (the work
// status controller does for kinds whose operators label each pod with
// its component). Its targets may record their components or not (bad
// input): the move is the same.
func TestGangMovedWhole(t *testing.T) {
	suite.Hub(t)
	startManager(t)
	for _, tc := range []struct {
		ns         string
		components []workv1alpha1.TargetComponent
		// byComponent: the cluster reports which component is Pending.
		byComponent bool
	}{{ns: "gang", components: components, byComponent: true}, {ns: "gang-no-target-components"}} {
		t.Run(tc.ns, func(t *testing.T) {
			t.Parallel()
			setup(t, tc.ns, tc.components, "m1", "m2")
			waitWork(t, tc.ns, "m1", true)
			waitWork(t, tc.ns, "m2", true)
			since := metav1.NewTime(time.Now().Truncate(time.Second))
			var pending []workv1alpha1.UnschedulableComponent
			there := "there"
			if tc.byComponent {
				pending = []workv1alpha1.UnschedulableComponent{{Name: "workers", Replicas: 2, Since: since}}
				there = `there; component "workers": 2 of 2 Pending since ` + since.UTC().Format(time.RFC3339)
			}
			setUnschedulable(t, tc.ns, "m2", 2, since, pending...)

			time.Sleep(threshold / 4)
			rb := get(t, tc.ns)
			if len(rb.Spec.EvictionHistory) > 0 || stateOf(rb, "m2") == workv1alpha1.TargetUnscheduled {
				t.Fatalf("moved before the threshold: targets %+v history %+v", rb.Spec.Clusters, rb.Spec.EvictionHistory)
			}
			eventually(t, "m2 left", func() error {
				rb = get(t, tc.ns)
				if stateOf(rb, "m2") != workv1alpha1.TargetUnscheduled {
					return fmt.Errorf("targets %+v", rb.Spec.Clusters)
				}
				return nil
			})
			if got := stateOf(rb, "m1"); got == workv1alpha1.TargetUnscheduled {
				t.Errorf("m1 %s: only the stuck cluster is left", got)
			}
			for _, tgt := range rb.Spec.Clusters {
				if tgt.Replicas != 0 || len(tgt.Components) != len(tc.components) {
					t.Errorf("target %+v changed: a gang is never lowered in part", tgt)
				}
			}
			if h := rb.Spec.EvictionHistory; len(h) != 1 || h[0].ClusterName != "m2" || h[0].Reason != descheduler.EvictionReason {
				t.Errorf("history %+v", h)
			}
			if tasks := rb.Spec.GracefulEvictionTasks; len(tasks) != 1 || tasks[0].FromCluster != "m2" || tasks[0].Producer != descheduler.Producer || tasks[0].PurgeMode != policyv1alpha1.PurgeGracefully {
				t.Errorf("tasks %+v", tasks)
			}
			if rb.Annotations[workv1alpha1.AnnotationDescheduledAt] == "" {
				t.Errorf("annotations %v", rb.Annotations)
			}
			eventually(t, "condition GangMoved", func() error {
				c := meta.FindStatusCondition(get(t, tc.ns).Status.Conditions, descheduler.ConditionReplicasDescheduled)
				if c == nil || c.Status != metav1.ConditionTrue || c.Reason != descheduler.ReasonGangMoved ||
					!strings.HasPrefix(c.Message, "Moved the gang whole from m2 (2 of its replicas unschedulable "+there+"); unschedulable for longer than 4s") {
					return fmt.Errorf("condition %+v", c)
				}
				return nil
			})
			eventually(t, "event GangDescheduled", func() error {
				list := &eventsv1.EventList{}
				if err := cli.List(context.Background(), list, client.InNamespace(tc.ns)); err != nil {
					return err
				}
				for _, e := range list.Items {
					if e.Reason == descheduler.EventGangDescheduled && strings.HasPrefix(e.Note, "Moved the gang whole from cluster m2: 2 of its replicas unschedulable there") &&
						strings.Contains(e.Note, strings.TrimPrefix(there, "there")+" (") {
						return nil
					}
				}
				return fmt.Errorf("%d events, none GangDescheduled from m2", len(list.Items))
			})
			// The graceful eviction task keeps the old copy: its Work stays.
			waitWork(t, tc.ns, "m2", true)
			waitWork(t, tc.ns, "m1", true)
		})
	}
}

func eventually(t *testing.T, what string, check func() error) {
	t.Helper()
	testenv.Eventually(t, timeout, what, check)
}

// setup creates a namespace holding a ConfigMap template and a gang's
// binding of it (two components, placed Duplicated) Bound on clusters,
// each target recording components.
func setup(t *testing.T, ns string, components []workv1alpha1.TargetComponent, clusters ...string) {
	t.Helper()
	ctx := context.Background()
	if err := cli.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "app"}}
	if err := cli.Create(ctx, cm); err != nil {
		t.Fatal(err)
	}
	rb := &workv1alpha1.ResourceBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "app-configmap"},
		Spec: workv1alpha1.BindingSpec{
			Resource:   workv1alpha1.ObjectReference{APIVersion: "v1", Kind: "ConfigMap", Namespace: ns, Name: "app", UID: string(cm.UID)},
			Components: []workv1alpha1.Component{{Name: "head", Replicas: 1}, {Name: "workers", Replicas: 2}},
			Placement: &policyv1alpha1.Placement{ReplicaScheduling: &policyv1alpha1.ReplicaSchedulingStrategy{
				ReplicaSchedulingType: policyv1alpha1.ReplicaSchedulingTypeDuplicated}},
		},
	}
	for _, c := range clusters {
		rb.Spec.Clusters = append(rb.Spec.Clusters, workv1alpha1.TargetCluster{Name: c, State: workv1alpha1.TargetBound, Components: components})
	}
	if err := cli.Create(ctx, rb); err != nil {
		t.Fatal(err)
	}
}

// setUnschedulable writes the binding's aggregated status as the work
// status controller would: n replicas unschedulable on cluster since,
// those of components among them.
func setUnschedulable(t *testing.T, ns, cluster string, n int32, since metav1.Time, components ...workv1alpha1.UnschedulableComponent) {
	t.Helper()
	eventually(t, "status written", func() error {
		rb := get(t, ns)
		rb.Status.AggregatedStatus = nil
		for _, tgt := range rb.Spec.Clusters {
			item := workv1alpha1.AggregatedStatusItem{ClusterName: tgt.Name, Applied: true}
			if tgt.Name == cluster {
				item.UnschedulableReplicas, item.UnschedulableSince, item.UnschedulableComponents = n, &since, components
			}
			rb.Status.AggregatedStatus = append(rb.Status.AggregatedStatus, item)
		}
		return cli.Status().Update(context.Background(), rb)
	})
}

func get(t *testing.T, ns string) *workv1alpha1.ResourceBinding {
	t.Helper()
	rb := &workv1alpha1.ResourceBinding{}
	if err := cli.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "app-configmap"}, rb); err != nil {
		t.Fatal(err)
	}
	return rb
}

// stateOf returns a target's state, "" when the target is gone.
func stateOf(rb *workv1alpha1.ResourceBinding, cluster string) workv1alpha1.TargetState {
	for _, tgt := range rb.Spec.Clusters {
		if tgt.Name == cluster {
			if tgt.State == "" {
				return workv1alpha1.TargetScheduled
			}
			return tgt.State
		}
	}
	return ""
}

// waitWork waits until the binding's Work for cluster exists (or not).
func waitWork(t *testing.T, ns, cluster string, want bool) {
	t.Helper()
	ref := names.BindingRef{Kind: workv1alpha1.KindResourceBinding, Namespace: ns, Name: "app-configmap"}
	eventually(t, fmt.Sprintf("Work on %s exists=%v", cluster, want), func() error {
		list := &workv1alpha1.WorkList{}
		if err := cli.List(context.Background(), list, client.InNamespace(names.ExecutionNamespace(cluster))); err != nil {
			return err
		}
		got := false
		for _, w := range list.Items {
			got = got || w.Annotations[workv1alpha1.AnnotationBinding] == ref.String()
		}
		if got != want {
			return fmt.Errorf("exists=%v", got)
		}
		return nil
	})
}
