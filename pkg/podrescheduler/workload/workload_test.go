package workload

import (
	"context"
	"errors"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/shepherd-io/shepherd/pkg/podrescheduler/workload/workloadtest"
)

func controllerRef(apiVersion, kind, name string, uid types.UID) []metav1.OwnerReference {
	return []metav1.OwnerReference{{APIVersion: apiVersion, Kind: kind, Name: name, UID: uid, Controller: ptr.To(true)}}
}

func pod(refs []metav1.OwnerReference) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", OwnerReferences: refs}}
}

func TestOf(t *testing.T) {
	deploy := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", UID: "d1"}}
	rsOfDeploy := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web-1", UID: "r1",
		OwnerReferences: controllerRef("apps/v1", "Deployment", "web", "d1")}}
	bareRS := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "bare", UID: "r2"}}
	c := fake.NewClientBuilder().WithObjects(deploy, rsOfDeploy, bareRS).Build()

	tests := []struct {
		name string
		pod  *corev1.Pod
		want string // "Kind ns/name" of the workload, "" for none
	}{
		{"no owner", pod(nil), ""},
		{"deployment through its replicaset", pod(controllerRef("apps/v1", "ReplicaSet", "web-1", "r1")), "Deployment ns/web"},
		{"bare replicaset", pod(controllerRef("apps/v1", "ReplicaSet", "bare", "r2")), "ReplicaSet ns/bare"},
		{"replicaset replaced (other UID)", pod(controllerRef("apps/v1", "ReplicaSet", "bare", "old")), ""},
		{"missing statefulset", pod(controllerRef("apps/v1", "StatefulSet", "db", "s1")), ""},
		{"daemonset is out of scope", pod(controllerRef("apps/v1", "DaemonSet", "agent", "x")), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Of(context.Background(), tt.pod, c)
			if err != nil {
				t.Fatal(err)
			}
			if d := describe(got); d != tt.want {
				t.Errorf("Of() = %q, want %q", d, tt.want)
			}
		})
	}
}

// TestOfFallsThrough reads through a first reader standing for a cache and
// a last one standing for the API server: each object comes from the
// first that has it with the UID its reference names.
func TestOfFallsThrough(t *testing.T) {
	rs := func(uid types.UID) *appsv1.ReplicaSet {
		return &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web-1", UID: uid,
			OwnerReferences: controllerRef("apps/v1", "Deployment", "web", "d1")}}
	}
	deploy := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", UID: "d1"}}
	failing := interceptor.Funcs{Get: func(context.Context, client.WithWatch, client.ObjectKey, client.Object, ...client.GetOption) error {
		return errors.New("not synced")
	}}
	tests := []struct {
		name     string
		first    client.Reader
		last     *workloadtest.Reader
		wantLast int // reads of the last reader
		want     string
	}{
		{"all in the first", workloadtest.NewReader(rs("r1"), deploy), workloadtest.NewReader(), 0, "Deployment ns/web"},
		{"replicaset not in the first yet", workloadtest.NewReader(deploy), workloadtest.NewReader(rs("r1")), 1, "Deployment ns/web"},
		{"replicaset in the first with an older UID", workloadtest.NewReader(rs("old"), deploy), workloadtest.NewReader(rs("r1")), 1, "Deployment ns/web"},
		{"first fails", fake.NewClientBuilder().WithInterceptorFuncs(failing).Build(), workloadtest.NewReader(rs("r1"), deploy), 2, "Deployment ns/web"},
		{"in neither", workloadtest.NewReader(), workloadtest.NewReader(), 1, ""},
		{"replaced in both", workloadtest.NewReader(rs("old")), workloadtest.NewReader(rs("old")), 1, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			last := tt.last
			got, err := Of(context.Background(), pod(controllerRef("apps/v1", "ReplicaSet", "web-1", "r1")), tt.first, last)
			if err != nil {
				t.Fatal(err)
			}
			if d := describe(got); d != tt.want || last.Gets != tt.wantLast {
				t.Errorf("Of() = %q after %d reads of the last reader, want %q after %d", d, last.Gets, tt.want, tt.wantLast)
			}
		})
	}
}

func TestReread(t *testing.T) {
	fresh := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", UID: "d1", Annotations: map[string]string{"v": "2"}}}
	stale := metadataOf(deployment)
	stale.Namespace, stale.Name, stale.UID, stale.Annotations = "ns", "web", "d1", map[string]string{"v": "1"}
	tests := []struct {
		name   string
		reader client.Reader
		want   string // annotation v, "" for no workload
	}{
		{"newer state", workloadtest.NewReader(fresh), "2"},
		{"gone", workloadtest.NewReader(), ""},
		{"replaced", workloadtest.NewReader(&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", UID: "d2"}}), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Reread(context.Background(), tt.reader, stale)
			if err != nil {
				t.Fatal(err)
			}
			var v string
			if got != nil {
				v = got.Annotations["v"]
			}
			if v != tt.want {
				t.Errorf("Reread() has v=%q, want %q", v, tt.want)
			}
		})
	}
}

func describe(obj *metav1.PartialObjectMetadata) string {
	if obj == nil {
		return ""
	}
	return Describe(obj)
}
