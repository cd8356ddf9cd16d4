package reschedule_test

import (
	"context"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"

	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
	taskv1alpha1 "github.com/shepherd-io/shepherd/api/task/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/controllers/reschedule"
)

// TestRescheduleRestartsFallbackTerms: a reschedule is a Fresh cycle, so
// ordered fallback affinity terms restart from the first one.
func TestRescheduleRestartsFallbackTerms(t *testing.T) {
	suite.Hub(t)
	const ns = "fallback"
	namespace(t, ns)
	apply(t, policyYAML(ns, "web", `clusterAffinities:
- {affinityName: primary, clusterNames: [fb-primary]}
- {affinityName: backup, clusterNames: [c1]}
replicaScheduling: {replicaSchedulingType: Divided}`)+"---"+deploymentYAML(ns, "web", 2, "nginx:1.27"))
	rb := waitScheduled(t, ns, "web-deployment", targetsAre(map[string]int32{"c1": 2}))
	if rb.Status.ObservedAffinityName != "backup" {
		t.Fatalf("observedAffinityName %q, want backup", rb.Status.ObservedAffinityName)
	}
	// The primary cluster joins: the placement stays on the backup term.
	if err := createCluster(context.Background(), "fb-primary", nil); err != nil {
		t.Fatal(err)
	}
	unchanged(t, "the primary cluster joining", rb)

	task := waitCompleted(t, createTask(t, ns, nil, "web").Name)
	if c := meta.FindStatusCondition(task.Status.Conditions, taskv1alpha1.ConditionCompleted); c.Reason != reschedule.ReasonAllSucceeded {
		t.Fatalf("task %+v", task.Status)
	}
	rb = waitScheduled(t, ns, "web-deployment", targetsAre(map[string]int32{"fb-primary": 2}))
	if rb.Status.ObservedAffinityName != "primary" {
		t.Fatalf("observedAffinityName %q, want primary", rb.Status.ObservedAffinityName)
	}
}

// TestFailedRescheduleReportsWhy: when the Fresh cycle cannot place the
// workload, the target fails with the scheduler's reason.
func TestFailedRescheduleReportsWhy(t *testing.T) {
	suite.Hub(t)
	const ns = "fresh-fails"
	namespace(t, ns)
	if err := createCluster(context.Background(), "ff-1", map[string]string{"pool": "ff"}); err != nil {
		t.Fatal(err)
	}
	apply(t, policyYAML(ns, "web", "clusterAffinity: {labelSelector: {matchLabels: {pool: ff}}}\nreplicaScheduling: {replicaSchedulingType: Divided}\nspreadConstraints: [{spreadByField: cluster, minGroups: 1, maxGroups: 1}]")+
		"---"+deploymentYAML(ns, "web", 2, "nginx:1.27"))
	rb := waitScheduled(t, ns, "web-deployment", targetsAre(map[string]int32{"ff-1": 2}))
	// The cluster leaves the pool: a placed workload stays where it is...
	updateCluster(t, "ff-1", false, func(c *clusterv1alpha1.Cluster) { c.Labels = nil })
	unchanged(t, "a selected cluster leaving the label selector", rb)

	// ...until asked to reschedule, which finds no cluster.
	task := waitCompleted(t, createTask(t, ns, nil, "web").Name)
	c := meta.FindStatusCondition(task.Status.Conditions, taskv1alpha1.ConditionCompleted)
	if c.Reason != reschedule.ReasonSomeFailed || len(task.Status.Targets) != 1 {
		t.Fatalf("task %+v", task.Status)
	}
	if got := task.Status.Targets[0]; got.Phase != taskv1alpha1.TargetFailed ||
		!strings.HasPrefix(got.Reason, "scheduling failed (Unschedulable): ") || !strings.Contains(got.Reason, "clusters available") {
		t.Fatalf("target %+v", got)
	}
}
