package reschedule_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
	taskv1alpha1 "github.com/shepherd-io/shepherd/api/task/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/controllers/reschedule"
	"github.com/shepherd-io/shepherd/pkg/placement"
)

// staticEqual divides replicas over two clusters with equal static weights.
func staticEqual(a, b string) string {
	return fmt.Sprintf(`clusterAffinity: {clusterNames: [%[1]s, %[2]s]}
replicaScheduling:
  replicaSchedulingType: Divided
  replicaDivisionPreference: Weighted
  weightPreference:
    staticWeightList:
    - {targetCluster: {clusterNames: [%[1]s]}, weight: 1}
    - {targetCluster: {clusterNames: [%[2]s]}, weight: 1}`, a, b)
}

// TestTaskMovesReplicasBack is the RescheduleTask story: a cluster fails, its
// replicas move, it comes back, nothing moves by itself, and a task moves
// the replicas back per the placement.
func TestTaskMovesReplicasBack(t *testing.T) {
	suite.Hub(t)
	const ns = "move-back"
	namespace(t, ns)
	for _, c := range []string{"back-a", "back-b"} {
		if err := createCluster(context.Background(), c, nil); err != nil {
			t.Fatal(err)
		}
	}
	apply(t, policyYAML(ns, "web", staticEqual("back-a", "back-b"))+"---"+deploymentYAML(ns, "web", 4, "nginx:1.27"))
	waitScheduled(t, ns, "web-deployment", targetsAre(map[string]int32{"back-a": 2, "back-b": 2}))

	// back-a fails (its Cluster goes): its replicas move to back-b.
	if err := cli.Delete(context.Background(), &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "back-a"}}); err != nil {
		t.Fatal(err)
	}
	moved := waitScheduled(t, ns, "web-deployment", targetsAre(map[string]int32{"back-b": 4}))

	// back-a comes back: a Divided placement over named clusters is not
	// moved by a cluster becoming eligible.
	if err := createCluster(context.Background(), "back-a", nil); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Second)
	rb, err := getRB(ns, "web-deployment")
	if err != nil {
		t.Fatal(err)
	}
	if err := targetsAre(map[string]int32{"back-b": 4})(rb); err != nil || !rb.Status.LastScheduledTime.Equal(moved.Status.LastScheduledTime) {
		t.Fatalf("the returning cluster moved replicas by itself: %v (lastScheduledTime %v -> %v)", err, moved.Status.LastScheduledTime, rb.Status.LastScheduledTime)
	}

	task := createTask(t, ns, nil, "web")
	task = waitCompleted(t, task.Name)
	c := meta.FindStatusCondition(task.Status.Conditions, taskv1alpha1.ConditionCompleted)
	if c.Reason != reschedule.ReasonAllSucceeded || task.Status.CompletionTime == nil || len(task.Status.Targets) != 1 {
		t.Fatalf("task status %+v", task.Status)
	}
	target := task.Status.Targets[0]
	if target.Phase != taskv1alpha1.TargetSuccessful || target.Binding != ns+"/web-deployment" || target.FinishedAt == nil ||
		target.Resource != (taskv1alpha1.ResourceSelector{APIVersion: "apps/v1", Kind: "Deployment", Namespace: ns, Name: "web"}) {
		t.Fatalf("target %+v", target)
	}
	rb = waitScheduled(t, ns, "web-deployment", targetsAre(map[string]int32{"back-a": 2, "back-b": 2}))
	if !rb.Spec.RescheduleTriggeredAt.Equal(&task.CreationTimestamp) || rb.Status.LastScheduledTime.Before(&task.CreationTimestamp) ||
		rb.Annotations[workv1alpha1.AnnotationRescheduleObserved] != task.CreationTimestamp.UTC().Format(time.RFC3339) {
		t.Fatalf("binding stamp %v, lastScheduledTime %v, annotations %v; task created %v", rb.Spec.RescheduleTriggeredAt, rb.Status.LastScheduledTime, rb.Annotations, task.CreationTimestamp)
	}
	for _, reason := range []string{reschedule.EventRescheduling, reschedule.EventCompleted} {
		eventually(t, reason+" event", func() error {
			_, err := eventAbout(task.Name, reason)
			return err
		})
	}
}

// TestTaskForMissingWorkloadFails: a task naming a workload without a
// binding fails that target with the reason, still reschedules the
// others, and goes after its TTL.
func TestTaskForMissingWorkloadFails(t *testing.T) {
	suite.Hub(t)
	const ns = "missing"
	namespace(t, ns)
	apply(t, policyYAML(ns, "web", dividedOver("c1", "c2"))+"---"+deploymentYAML(ns, "web", 2, "nginx:1.27"))
	waitScheduled(t, ns, "web-deployment", targetsAre(map[string]int32{"c1": 1, "c2": 1}))

	task := createTask(t, ns, ptr.To[int32](2), "web", "absent")
	task = waitCompleted(t, task.Name)
	c := meta.FindStatusCondition(task.Status.Conditions, taskv1alpha1.ConditionCompleted)
	if c.Reason != reschedule.ReasonSomeFailed || !strings.Contains(c.Message, "1 of 2 targets failed") {
		t.Fatalf("condition %+v", c)
	}
	phases := map[string]taskv1alpha1.TargetStatus{}
	for _, tg := range task.Status.Targets {
		phases[tg.Resource.Name] = tg
	}
	if phases["web"].Phase != taskv1alpha1.TargetSuccessful {
		t.Errorf("web: %+v", phases["web"])
	}
	if got := phases["absent"]; got.Phase != taskv1alpha1.TargetFailed || got.Reason != "no binding for apps/v1 Deployment missing/absent" || got.FinishedAt == nil {
		t.Errorf("absent: %+v", got)
	}
	eventually(t, "TargetFailed event", func() error {
		e, err := eventAbout(task.Name, reschedule.EventTargetFailed)
		if err == nil && !strings.Contains(e.Note, "no binding for") {
			return fmt.Errorf("note %q", e.Note)
		}
		return err
	})
	eventually(t, "task deleted after its TTL", func() error {
		err := cli.Get(context.Background(), client.ObjectKey{Name: task.Name}, &taskv1alpha1.RescheduleTask{})
		if err == nil {
			return fmt.Errorf("still there")
		}
		return client.IgnoreNotFound(err)
	})
}

// TestTaskByPolicy reschedules every workload a policy governs, once each
// even when also named, and fails missing policies with the reason.
func TestTaskByPolicy(t *testing.T) {
	suite.Hub(t)
	const ns = "by-policy"
	namespace(t, ns)
	apply(t, policyYAML(ns, "all", dividedOver("c1", "c2"))+"---"+deploymentYAML(ns, "a", 2, "nginx:1.27")+"---"+deploymentYAML(ns, "b", 2, "nginx:1.27"))
	for _, name := range []string{"a-deployment", "b-deployment"} {
		waitScheduled(t, ns, name, targetsAre(map[string]int32{"c1": 1, "c2": 1}))
	}
	task := create(t, &taskv1alpha1.RescheduleTask{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "by-policy-"},
		Spec: taskv1alpha1.RescheduleTaskSpec{
			TargetRefPolicy:   []taskv1alpha1.PolicySelector{{Namespace: ns, Name: "all"}, {Namespace: ns, Name: "nope"}, {Name: "ghost"}},
			TargetRefResource: []taskv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment", Namespace: ns, Name: "a"}},
		},
	})
	task = waitCompleted(t, task.Name)
	got := map[string]string{}
	for _, tg := range task.Status.Targets {
		got[tg.Resource.Kind+" "+tg.Resource.Name] = string(tg.Phase) + " " + tg.Reason
	}
	want := map[string]string{
		"Deployment a":                   "Successful ",
		"Deployment b":                   "Successful ",
		"PropagationPolicy nope":         "Failed PropagationPolicy by-policy/nope not found",
		"ClusterPropagationPolicy ghost": "Failed ClusterPropagationPolicy ghost not found",
	}
	if len(got) != len(want) || len(task.Status.Targets) != len(want) {
		t.Fatalf("targets %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %q, want %q", k, got[k], v)
		}
	}
}

// TestTwoTasksInQuickSuccession: two tasks for one workload, one right
// after the other, both finish; the binding keeps the later stamp.
func TestTwoTasksInQuickSuccession(t *testing.T) {
	suite.Hub(t)
	const ns = "two-tasks"
	namespace(t, ns)
	apply(t, policyYAML(ns, "web", dividedOver("c1", "c2"))+"---"+deploymentYAML(ns, "web", 2, "nginx:1.27"))
	waitScheduled(t, ns, "web-deployment", targetsAre(map[string]int32{"c1": 1, "c2": 1}))
	first := createTask(t, ns, nil, "web")
	time.Sleep(1100 * time.Millisecond) // a later creation time
	second := createTask(t, ns, nil, "web")
	third := createTask(t, ns, nil, "web") // most likely the same second
	for _, task := range []*taskv1alpha1.RescheduleTask{first, second, third} {
		done := waitCompleted(t, task.Name)
		if c := meta.FindStatusCondition(done.Status.Conditions, taskv1alpha1.ConditionCompleted); c.Reason != reschedule.ReasonAllSucceeded {
			t.Errorf("task %s: %+v", task.Name, done.Status)
		}
	}
	latest := second.CreationTimestamp
	if third.CreationTimestamp.After(latest.Time) {
		latest = third.CreationTimestamp
	}
	rb := waitScheduled(t, ns, "web-deployment", targetsAre(map[string]int32{"c1": 1, "c2": 1}))
	if !rb.Spec.RescheduleTriggeredAt.Equal(&latest) || !placement.RescheduleServed(rb, latest) {
		t.Fatalf("binding stamp %v (annotations %v, lastScheduledTime %v), want %v served", rb.Spec.RescheduleTriggeredAt, rb.Annotations, rb.Status.LastScheduledTime, latest)
	}
}

// TestRescheduleInTheSecondOfTheLastScheduling: a task created in the
// very second the binding was last scheduled is not lost (times in the
// API have second precision).
func TestRescheduleInTheSecondOfTheLastScheduling(t *testing.T) {
	suite.Hub(t)
	const ns = "same-second"
	namespace(t, ns)
	for attempt := 1; ; attempt++ {
		replicas := 2 * attempt
		apply(t, policyYAML(ns, "web", dividedOver("c1", "c2"))+"---"+deploymentYAML(ns, "web", replicas, "nginx:1.27"))
		rb := waitScheduled(t, ns, "web-deployment", func(b *workv1alpha1.ResourceBinding) error {
			// The status written with the new targets observes their generation.
			if sumOf(activeTargets(b)) != int32(replicas) || b.Status.ObservedGeneration != b.Generation {
				return fmt.Errorf("not rescheduled for %d replicas yet", replicas)
			}
			return nil
		})
		task := createTask(t, ns, nil, "web")
		if !task.CreationTimestamp.Equal(rb.Status.LastScheduledTime) {
			if attempt == 10 {
				t.Skip("never managed to create the task in the second of the last scheduling")
			}
			waitCompleted(t, task.Name)
			continue
		}
		done := waitCompleted(t, task.Name)
		if c := meta.FindStatusCondition(done.Status.Conditions, taskv1alpha1.ConditionCompleted); c.Reason != reschedule.ReasonAllSucceeded {
			t.Fatalf("task %+v", done.Status)
		}
		after, err := getRB(ns, "web-deployment")
		if err != nil {
			t.Fatal(err)
		}
		if after.Annotations[workv1alpha1.AnnotationRescheduleObserved] != task.CreationTimestamp.UTC().Format(time.RFC3339) {
			t.Fatalf("the stamp of the same second was not served: annotations %v", after.Annotations)
		}
		t.Logf("served a stamp of the second of the last scheduling at attempt %d", attempt)
		return
	}
}

func sumOf(m map[string]int32) int32 {
	var s int32
	for _, v := range m {
		s += v
	}
	return s
}
