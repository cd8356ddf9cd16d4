package reschedule_test

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

	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
	taskv1alpha1 "github.com/shepherd-io/shepherd/api/task/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/controllers/internal/bindingutil"
	"github.com/shepherd-io/shepherd/test/testenv"
)

// timeout bounds every wait; the controllers react within milliseconds.
const timeout = 30 * time.Second

// eventually polls check until it returns nil, failing the test with its
// last error after timeout.
func eventually(t *testing.T, what string, check func() error) {
	t.Helper()
	testenv.Eventually(t, timeout, what, check)
}

func namespace(t *testing.T, name string) {
	t.Helper()
	if err := cli.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
		t.Fatal(err)
	}
}

// apply server-side applies YAML documents to the hub.
func apply(t *testing.T, yaml string) {
	t.Helper()
	if _, err := hub.Apply(context.Background(), []byte(yaml)); err != nil {
		t.Fatal(err)
	}
}

// createCluster registers a ready cluster (testenv.CreateReadyCluster).
func createCluster(ctx context.Context, name string, labels map[string]string, taints ...corev1.Taint) error {
	return testenv.CreateReadyCluster(ctx, cli, name, labels, taints...)
}

// updateCluster applies mutate to a cluster (spec and metadata, or status
// when status is true), retrying on conflicts.
func updateCluster(t *testing.T, name string, status bool, mutate func(c *clusterv1alpha1.Cluster)) {
	t.Helper()
	eventually(t, "updating cluster "+name, func() error {
		c := &clusterv1alpha1.Cluster{}
		if err := cli.Get(context.Background(), client.ObjectKey{Name: name}, c); err != nil {
			return err
		}
		mutate(c)
		if status {
			return cli.Status().Update(context.Background(), c)
		}
		return cli.Update(context.Background(), c)
	})
}

func getRB(ns, name string) (*workv1alpha1.ResourceBinding, error) {
	rb := &workv1alpha1.ResourceBinding{}
	return rb, cli.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, rb)
}

// waitScheduled waits until the binding is Scheduled and check accepts it.
func waitScheduled(t *testing.T, ns, name string, check func(b *workv1alpha1.ResourceBinding) error) *workv1alpha1.ResourceBinding {
	t.Helper()
	var rb *workv1alpha1.ResourceBinding
	eventually(t, "binding "+ns+"/"+name+" scheduled", func() error {
		var err error
		if rb, err = getRB(ns, name); err != nil {
			return err
		}
		if !meta.IsStatusConditionTrue(rb.Status.Conditions, workv1alpha1.ConditionScheduled) {
			return fmt.Errorf("not scheduled: %+v", rb.Status.Conditions)
		}
		return check(rb)
	})
	return rb
}

// targetsAre returns a check that the active targets are exactly want.
func targetsAre(want map[string]int32) func(b *workv1alpha1.ResourceBinding) error {
	return func(b *workv1alpha1.ResourceBinding) error {
		got := activeTargets(b)
		if len(got) != len(want) {
			return fmt.Errorf("targets %v, want %v", b.Spec.Clusters, want)
		}
		for c, n := range want {
			if r, ok := got[c]; !ok || r != n {
				return fmt.Errorf("targets %v, want %v", b.Spec.Clusters, want)
			}
		}
		return nil
	}
}

// activeTargets returns name -> replicas of the Scheduled and Bound targets.
func activeTargets(b workv1alpha1.BindingObject) map[string]int32 {
	out := map[string]int32{}
	for _, t := range bindingutil.ActiveTargets(b.GetBindingSpec().Clusters) {
		out[t.Name] = t.Replicas
	}
	return out
}

// deploymentYAML is a Deployment of ns.
func deploymentYAML(ns, name string, replicas int, image string) string {
	return fmt.Sprintf(`
apiVersion: apps/v1
kind: Deployment
metadata: {name: %[2]s, namespace: %[1]s, labels: {app: %[2]s}}
spec:
  replicas: %[3]d
  selector: {matchLabels: {app: %[2]s}}
  template:
    metadata: {labels: {app: %[2]s}}
    spec:
      containers:
      - {name: app, image: %[4]s, resources: {requests: {cpu: 100m, memory: 64Mi}}}
`, ns, name, replicas, image)
}

// policyYAML is a PropagationPolicy "name" of ns for every Deployment
// (or those named), with placement indented under placement:.
func policyYAML(ns, name, placement string, deployments ...string) string {
	sel := "  - {apiVersion: apps/v1, kind: Deployment}\n"
	if len(deployments) > 0 {
		sel = ""
		for _, d := range deployments {
			sel += fmt.Sprintf("  - {apiVersion: apps/v1, kind: Deployment, name: %s}\n", d)
		}
	}
	lines := strings.Split(strings.TrimRight(placement, "\n"), "\n")
	return fmt.Sprintf(`
apiVersion: policy.shepherd.io/v1alpha1
kind: PropagationPolicy
metadata: {name: %s, namespace: %s}
spec:
  resourceSelectors:
%s  placement:
    %s
`, name, ns, sel, strings.Join(lines, "\n    "))
}

// dividedOver divides replicas equally over the named clusters.
func dividedOver(clusters ...string) string {
	return fmt.Sprintf("clusterAffinity: {clusterNames: [%s]}\nreplicaScheduling: {replicaSchedulingType: Divided, replicaDivisionPreference: Weighted}", strings.Join(clusters, ", "))
}

// createTask creates a RescheduleTask for Deployments of ns.
func createTask(t *testing.T, ns string, ttl *int32, deployments ...string) *taskv1alpha1.RescheduleTask {
	t.Helper()
	task := &taskv1alpha1.RescheduleTask{ObjectMeta: metav1.ObjectMeta{GenerateName: "test-"}}
	task.Spec.TTLSecondsAfterFinished = ttl
	for _, d := range deployments {
		task.Spec.TargetRefResource = append(task.Spec.TargetRefResource, taskv1alpha1.ResourceSelector{APIVersion: "apps/v1", Kind: "Deployment", Namespace: ns, Name: d})
	}
	return create(t, task)
}

func create(t *testing.T, task *taskv1alpha1.RescheduleTask) *taskv1alpha1.RescheduleTask {
	t.Helper()
	if err := cli.Create(context.Background(), task); err != nil {
		t.Fatal(err)
	}
	return task
}

// waitCompleted waits until the task is Completed and returns it.
func waitCompleted(t *testing.T, name string) *taskv1alpha1.RescheduleTask {
	t.Helper()
	task := &taskv1alpha1.RescheduleTask{}
	eventually(t, "task "+name+" completed", func() error {
		if err := cli.Get(context.Background(), client.ObjectKey{Name: name}, task); err != nil {
			return err
		}
		if !meta.IsStatusConditionTrue(task.Status.Conditions, taskv1alpha1.ConditionCompleted) {
			return fmt.Errorf("status %+v", task.Status)
		}
		return nil
	})
	return task
}

// eventAbout returns an event with reason about the named object.
func eventAbout(name, reason string) (*eventsv1.Event, error) {
	list := &eventsv1.EventList{}
	if err := cli.List(context.Background(), list); err != nil {
		return nil, err
	}
	for i := range list.Items {
		if e := &list.Items[i]; e.Regarding.Name == name && e.Reason == reason {
			return e, nil
		}
	}
	return nil, fmt.Errorf("no %s event about %s among %d events", reason, name, len(list.Items))
}
