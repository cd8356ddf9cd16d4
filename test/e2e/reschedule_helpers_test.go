package e2e

import (
	"context"
	"fmt"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
	taskv1alpha1 "github.com/shepherd-io/shepherd/api/task/v1alpha1"
)

// staticEqualOver divides replicas over two members with equal static weights.
func staticEqualOver(a, b string) string {
	return fmt.Sprintf(`clusterAffinity:
  clusterNames: [%[1]s, %[2]s]
replicaScheduling:
  replicaSchedulingType: Divided
  replicaDivisionPreference: Weighted
  weightPreference:
    staticWeightList:
    - {targetCluster: {clusterNames: [%[1]s]}, weight: 1}
    - {targetCluster: {clusterNames: [%[2]s]}, weight: 1}
`, a, b)
}

// createRescheduleTask creates a RescheduleTask for Deployments of ns.
func createRescheduleTask(t *testing.T, ns string, deployments ...string) *taskv1alpha1.RescheduleTask {
	t.Helper()
	task := &taskv1alpha1.RescheduleTask{ObjectMeta: metav1.ObjectMeta{GenerateName: "e2e-"}}
	for _, d := range deployments {
		task.Spec.TargetRefResource = append(task.Spec.TargetRefResource, taskv1alpha1.ResourceSelector{APIVersion: "apps/v1", Kind: "Deployment", Namespace: ns, Name: d})
	}
	if err := hub.Create(context.Background(), task); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = hub.Delete(context.Background(), task) })
	return task
}

// waitTaskCompleted waits until the task is Completed and returns it.
func waitTaskCompleted(t *testing.T, name string) *taskv1alpha1.RescheduleTask {
	t.Helper()
	task := &taskv1alpha1.RescheduleTask{}
	eventually(t, "rescheduletask "+name+" completed", func() error {
		if err := hub.Get(context.Background(), client.ObjectKey{Name: name}, task); err != nil {
			return err
		}
		if !meta.IsStatusConditionTrue(task.Status.Conditions, taskv1alpha1.ConditionCompleted) {
			return fmt.Errorf("status %+v", task.Status)
		}
		return nil
	})
	return task
}

// memberDeploymentUID returns the UID of a Deployment in a member.
func memberDeploymentUID(t *testing.T, cluster string, key client.ObjectKey) types.UID {
	t.Helper()
	d := &appsv1.Deployment{}
	if err := inMember(cluster, key, d); err != nil {
		t.Fatal(err)
	}
	return d.UID
}

// clusterServing checks the member is Ready and its API enablements are
// known, so the scheduler may place on it.
func clusterServing(name string) error {
	if err := clusterReady(name, metav1.ConditionTrue); err != nil {
		return err
	}
	c := &clusterv1alpha1.Cluster{}
	if err := hub.Get(context.Background(), client.ObjectKey{Name: name}, c); err != nil {
		return err
	}
	if len(c.Status.APIEnablements) == 0 {
		return fmt.Errorf("API enablements of %s not collected yet", name)
	}
	return nil
}
