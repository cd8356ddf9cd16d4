package workload

import (
	"context"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

func controllerRef(apiVersion, kind, name string, uid types.UID) []metav1.OwnerReference {
	return []metav1.OwnerReference{{APIVersion: apiVersion, Kind: kind, Name: name, UID: uid, Controller: ptr.To(true)}}
}

func TestOf(t *testing.T) {
	deploy := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", UID: "d1"}}
	rsOfDeploy := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web-1", UID: "r1",
		OwnerReferences: controllerRef("apps/v1", "Deployment", "web", "d1")}}
	bareRS := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "bare", UID: "r2"}}
	c := fake.NewClientBuilder().WithObjects(deploy, rsOfDeploy, bareRS).Build()

	pod := func(refs []metav1.OwnerReference) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", OwnerReferences: refs}}
	}
	tests := []struct {
		name string
		pod  *corev1.Pod
		want string // name of the workload, "" for none
	}{
		{"no owner", pod(nil), ""},
		{"deployment through its replicaset", pod(controllerRef("apps/v1", "ReplicaSet", "web-1", "r1")), "web"},
		{"bare replicaset", pod(controllerRef("apps/v1", "ReplicaSet", "bare", "r2")), "bare"},
		{"replicaset replaced (other UID)", pod(controllerRef("apps/v1", "ReplicaSet", "bare", "old")), ""},
		{"missing statefulset", pod(controllerRef("apps/v1", "StatefulSet", "db", "s1")), ""},
		{"daemonset is out of scope", pod(controllerRef("apps/v1", "DaemonSet", "agent", "x")), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Of(context.Background(), c, tt.pod)
			if err != nil {
				t.Fatal(err)
			}
			if name := nameOf(got); name != tt.want {
				t.Errorf("Of() = %q, want %q", name, tt.want)
			}
		})
	}
}

func nameOf(obj client.Object) string {
	if obj == nil {
		return ""
	}
	return obj.GetName()
}
