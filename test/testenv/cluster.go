package testenv

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
)

// CreateReadyCluster registers a Cluster that stands for a member without
// one behind it: Ready, serving the kinds the tests propagate (Deployments,
// Jobs, ConfigMaps, ClusterRoles), with room for anything. Controller tests
// that never apply to members use it to give the scheduler a fleet.
func CreateReadyCluster(ctx context.Context, c client.Client, name string, labels map[string]string, taints ...corev1.Taint) error {
	cl := &clusterv1alpha1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Spec: clusterv1alpha1.ClusterSpec{
			SyncMode:    clusterv1alpha1.Push,
			APIEndpoint: "https://127.0.0.1:6443",
			SecretRef:   &clusterv1alpha1.LocalSecretReference{Namespace: "default", Name: name},
			Taints:      taints,
		},
	}
	if err := c.Create(ctx, cl); err != nil {
		return err
	}
	now := metav1.Now()
	cl.Status = clusterv1alpha1.ClusterStatus{
		KubernetesVersion: "v1.36.3",
		LastProbeTime:     &now,
		Conditions: []metav1.Condition{{
			Type: clusterv1alpha1.ClusterConditionReady, Status: metav1.ConditionTrue,
			Reason: "Ready", Message: "test cluster", LastTransitionTime: now,
		}},
		APIEnablements: []clusterv1alpha1.APIEnablement{
			{GroupVersion: "apps/v1", Resources: []clusterv1alpha1.APIResource{{Name: "deployments", Kind: "Deployment"}}},
			{GroupVersion: "batch/v1", Resources: []clusterv1alpha1.APIResource{{Name: "jobs", Kind: "Job"}}},
			{GroupVersion: "v1", Resources: []clusterv1alpha1.APIResource{{Name: "configmaps", Kind: "ConfigMap"}}},
			{GroupVersion: "rbac.authorization.k8s.io/v1", Resources: []clusterv1alpha1.APIResource{{Name: "clusterroles", Kind: "ClusterRole"}}},
		},
		ResourceSummary: &clusterv1alpha1.ResourceSummary{Allocatable: corev1.ResourceList{
			corev1.ResourceCPU:    resource.MustParse("1000"),
			corev1.ResourceMemory: resource.MustParse("4Ti"),
			corev1.ResourcePods:   resource.MustParse("10000"),
		}},
	}
	return c.Status().Update(ctx, cl)
}
