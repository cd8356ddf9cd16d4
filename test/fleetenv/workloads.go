package fleetenv

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/shepherd-io/shepherd/internal/dev/simmember"
	"github.com/shepherd-io/shepherd/pkg/agent"
	"github.com/shepherd-io/shepherd/pkg/controllers/clusterstatus"
)

// DeploymentYAML is a Deployment of replicas nginx pods labelled app: name,
// each requesting 100m CPU and 64Mi.
func DeploymentYAML(ns, name string, replicas int) string {
	return ImageDeploymentYAML(ns, name, replicas, "nginx:1.27")
}

// ImageDeploymentYAML is DeploymentYAML with another image.
func ImageDeploymentYAML(ns, name string, replicas int, image string) string {
	return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: %[2]s
  namespace: %[1]s
spec:
  replicas: %[3]d
  selector:
    matchLabels: {app: %[2]s}
  template:
    metadata:
      labels: {app: %[2]s}
    spec:
      containers:
      - name: app
        image: %[4]s
        resources:
          requests: {cpu: 100m, memory: 64Mi}
`, ns, name, replicas, image)
}

// Starve makes new pods of app in namespace ns of the member c reaches
// impossible: a LimitRange caps containers at 10m CPU, so the API server
// refuses the ReplicaSet's pods (they request 100m). Deleting the running
// pods then leaves the Deployment without available replicas: Unhealthy.
// Only this namespace of this member is affected. It returns the undo.
func Starve(t testing.TB, c client.Client, ns, app string) func() {
	t.Helper()
	ctx := context.Background()
	lr := &corev1.LimitRange{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "starve"},
		Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{{
			Type: corev1.LimitTypeContainer, Max: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m")},
		}}},
	}
	if err := c.Create(ctx, lr); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	if err := c.DeleteAllOf(ctx, &corev1.Pod{}, client.InNamespace(ns), client.MatchingLabels{"app": app}); err != nil {
		t.Fatal(err)
	}
	return func() { _ = c.Delete(context.Background(), lr) }
}

// FastProbes are the cluster status options of the end-to-end suites:
// short enough for the tests to see taints quickly, long enough that a
// probe slowed down by two busy cores does not taint a healthy member.
func FastProbes() clusterstatus.Options {
	return clusterstatus.Options{ProbeInterval: time.Second, NotReadyGracePeriod: 10 * time.Second, NoExecuteGracePeriod: 20 * time.Second, ProbeTimeout: 5 * time.Second}
}

// SmallFleet is simmember.DefaultFleet(n) with two nodes per member: what the
// suites' workloads need, and cheaper to run.
func SmallFleet(n int) simmember.FleetSpec {
	f := simmember.DefaultFleet(n)
	for i := range f.Members {
		f.Members[i].Nodes = 2
	}
	return f
}

// FastAgent times the Pull agents of the end-to-end suites: a Lease of
// 4 s, so that a stopped agent shows within seconds.
func FastAgent() agent.Options {
	return agent.Options{LeaseDuration: 4 * time.Second, RenewDeadline: 3 * time.Second, RetryPeriod: time.Second, RestartDelay: time.Second,
		ClusterStatus: clusterstatus.Options{ProbeInterval: time.Second}}
}
