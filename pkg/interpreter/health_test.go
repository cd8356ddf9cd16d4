package interpreter

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
)

const (
	H = policyv1alpha1.ResourceHealthy
	U = policyv1alpha1.ResourceUnhealthy
	K = policyv1alpha1.ResourceUnknown
)

func ptr[T any](v T) *T { return &v }

// toU converts a typed object to what an informer on the member would hold.
func toU(t *testing.T, gvk schema.GroupVersionKind, obj runtime.Object) *unstructured.Unstructured {
	t.Helper()
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetGroupVersionKind(gvk)
	return u
}

type healthCase struct {
	name string
	obj  runtime.Object
	want policyv1alpha1.ResourceHealth
}

func runCases(t *testing.T, gvk schema.GroupVersionKind, cases []healthCase) {
	t.Helper()
	r := New()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := r.Health(toU(t, gvk, tc.obj))
			if got.Health != tc.want {
				t.Errorf("health = %s (%s), want %s", got.Health, got.Reason, tc.want)
			}
			if got.Reason == "" {
				t.Error("empty reason")
			}
		})
	}
}

func deploy(gen int64, replicas *int32, st appsv1.DeploymentStatus) *appsv1.Deployment {
	return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Generation: gen}, Spec: appsv1.DeploymentSpec{Replicas: replicas}, Status: st}
}

func TestDeploymentHealth(t *testing.T) {
	done := appsv1.DeploymentStatus{ObservedGeneration: 2, Replicas: 3, UpdatedReplicas: 3, AvailableReplicas: 3, ReadyReplicas: 3}
	stuck := done
	stuck.UpdatedReplicas = 1
	stuck.Conditions = []appsv1.DeploymentCondition{{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionFalse, Reason: "ProgressDeadlineExceeded"}}
	deadlineButDone := done
	deadlineButDone.Conditions = stuck.Conditions
	runCases(t, appsv1.SchemeGroupVersion.WithKind("Deployment"), []healthCase{
		{"complete", deploy(2, ptr[int32](3), done), H},
		{"observed newer generation", deploy(1, ptr[int32](3), done), H},
		{"spec change not observed yet", deploy(3, ptr[int32](3), done), U},
		{"rolling update in progress", deploy(2, ptr[int32](3), appsv1.DeploymentStatus{ObservedGeneration: 2, UpdatedReplicas: 1, AvailableReplicas: 3}), U},
		{"surge: the new replica unready, the old one still available", deploy(2, ptr[int32](1), appsv1.DeploymentStatus{ObservedGeneration: 2, Replicas: 2, UpdatedReplicas: 1, AvailableReplicas: 1, UnavailableReplicas: 1}), U},
		{"updated but not available", deploy(2, ptr[int32](3), appsv1.DeploymentStatus{ObservedGeneration: 2, UpdatedReplicas: 3, AvailableReplicas: 2}), U},
		{"scaled up, not there yet", deploy(2, ptr[int32](5), done), U},
		{"progress deadline exceeded", deploy(2, ptr[int32](3), stuck), U},
		{"deadline condition but counts complete", deploy(2, ptr[int32](3), deadlineButDone), U},
		{"nil replicas defaults to 1", deploy(1, nil, appsv1.DeploymentStatus{ObservedGeneration: 1, UpdatedReplicas: 1, AvailableReplicas: 1}), H},
		{"zero replicas", deploy(1, ptr[int32](0), appsv1.DeploymentStatus{ObservedGeneration: 1}), H},
		{"no status at all", deploy(1, ptr[int32](1), appsv1.DeploymentStatus{}), U},
	})
}

func TestStatefulSetHealth(t *testing.T) {
	sts := func(gen int64, strategy appsv1.StatefulSetUpdateStrategy, st appsv1.StatefulSetStatus) *appsv1.StatefulSet {
		return &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Generation: gen}, Spec: appsv1.StatefulSetSpec{Replicas: ptr[int32](3), UpdateStrategy: strategy}, Status: st}
	}
	rolling := appsv1.StatefulSetUpdateStrategy{Type: appsv1.RollingUpdateStatefulSetStrategyType}
	partitioned := appsv1.StatefulSetUpdateStrategy{Type: appsv1.RollingUpdateStatefulSetStrategyType, RollingUpdate: &appsv1.RollingUpdateStatefulSetStrategy{Partition: ptr[int32](2)}}
	onDelete := appsv1.StatefulSetUpdateStrategy{Type: appsv1.OnDeleteStatefulSetStrategyType}
	ok := appsv1.StatefulSetStatus{ObservedGeneration: 1, AvailableReplicas: 3, UpdatedReplicas: 3}
	old := appsv1.StatefulSetStatus{ObservedGeneration: 1, AvailableReplicas: 3, UpdatedReplicas: 1}
	runCases(t, appsv1.SchemeGroupVersion.WithKind("StatefulSet"), []healthCase{
		{"complete", sts(1, rolling, ok), H},
		{"default strategy, update in progress", sts(1, appsv1.StatefulSetUpdateStrategy{}, old), U},
		{"rolling update in progress", sts(1, rolling, old), U},
		{"partitioned update keeps old replicas", sts(1, partitioned, old), H},
		{"OnDelete keeps old replicas", sts(1, onDelete, old), H},
		{"not observed", sts(2, rolling, ok), U},
		{"replica missing", sts(1, rolling, appsv1.StatefulSetStatus{ObservedGeneration: 1, AvailableReplicas: 2, UpdatedReplicas: 3}), U},
	})
}

func TestReplicaSetHealth(t *testing.T) {
	rs := func(gen int64, st appsv1.ReplicaSetStatus) *appsv1.ReplicaSet {
		return &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Generation: gen}, Spec: appsv1.ReplicaSetSpec{Replicas: ptr[int32](2)}, Status: st}
	}
	runCases(t, appsv1.SchemeGroupVersion.WithKind("ReplicaSet"), []healthCase{
		{"available", rs(1, appsv1.ReplicaSetStatus{ObservedGeneration: 1, AvailableReplicas: 2}), H},
		{"one missing", rs(1, appsv1.ReplicaSetStatus{ObservedGeneration: 1, AvailableReplicas: 1}), U},
		{"not observed", rs(2, appsv1.ReplicaSetStatus{ObservedGeneration: 1, AvailableReplicas: 2}), U},
	})
}

func TestDaemonSetHealth(t *testing.T) {
	ds := func(gen int64, st appsv1.DaemonSetStatus) *appsv1.DaemonSet {
		return &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Generation: gen}, Status: st}
	}
	runCases(t, appsv1.SchemeGroupVersion.WithKind("DaemonSet"), []healthCase{
		{"all nodes", ds(1, appsv1.DaemonSetStatus{ObservedGeneration: 1, DesiredNumberScheduled: 4, UpdatedNumberScheduled: 4, NumberAvailable: 4}), H},
		{"no eligible node", ds(1, appsv1.DaemonSetStatus{ObservedGeneration: 1}), H},
		{"rolling", ds(1, appsv1.DaemonSetStatus{ObservedGeneration: 1, DesiredNumberScheduled: 4, UpdatedNumberScheduled: 2, NumberAvailable: 4}), U},
		{"unavailable", ds(1, appsv1.DaemonSetStatus{ObservedGeneration: 1, DesiredNumberScheduled: 4, UpdatedNumberScheduled: 4, NumberAvailable: 3}), U},
		{"not observed", ds(2, appsv1.DaemonSetStatus{ObservedGeneration: 1}), U},
	})
}

func TestJobHealth(t *testing.T) {
	job := func(conds ...batchv1.JobCondition) *batchv1.Job {
		return &batchv1.Job{Status: batchv1.JobStatus{Conditions: conds}}
	}
	cond := func(t batchv1.JobConditionType, s corev1.ConditionStatus) batchv1.JobCondition {
		return batchv1.JobCondition{Type: t, Status: s, Reason: "R"}
	}
	runCases(t, batchv1.SchemeGroupVersion.WithKind("Job"), []healthCase{
		{"running", job(), H},
		{"suspended", job(cond(batchv1.JobSuspended, corev1.ConditionTrue)), H},
		{"complete", job(cond(batchv1.JobSuccessCriteriaMet, corev1.ConditionTrue), cond(batchv1.JobComplete, corev1.ConditionTrue)), H},
		{"failed", job(cond(batchv1.JobFailureTarget, corev1.ConditionTrue), cond(batchv1.JobFailed, corev1.ConditionTrue)), U},
		{"failure target only", job(cond(batchv1.JobFailureTarget, corev1.ConditionTrue)), U},
		{"failed condition false", job(cond(batchv1.JobFailed, corev1.ConditionFalse)), H},
	})
}

func TestPodHealth(t *testing.T) {
	pod := func(phase corev1.PodPhase, ready corev1.ConditionStatus) *corev1.Pod {
		p := &corev1.Pod{Status: corev1.PodStatus{Phase: phase}}
		if ready != "" {
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: ready}}
		}
		return p
	}
	runCases(t, corev1.SchemeGroupVersion.WithKind("Pod"), []healthCase{
		{"running and ready", pod(corev1.PodRunning, corev1.ConditionTrue), H},
		{"running not ready", pod(corev1.PodRunning, corev1.ConditionFalse), U},
		{"running without conditions", pod(corev1.PodRunning, ""), U},
		{"succeeded", pod(corev1.PodSucceeded, ""), H},
		{"failed", pod(corev1.PodFailed, ""), U},
		{"pending", pod(corev1.PodPending, ""), U},
		{"unknown phase", pod(corev1.PodUnknown, ""), K},
		{"no phase", pod("", ""), K},
	})
}

func TestServiceHealth(t *testing.T) {
	svc := func(typ corev1.ServiceType, ingress ...corev1.LoadBalancerIngress) *corev1.Service {
		return &corev1.Service{Spec: corev1.ServiceSpec{Type: typ}, Status: corev1.ServiceStatus{LoadBalancer: corev1.LoadBalancerStatus{Ingress: ingress}}}
	}
	runCases(t, corev1.SchemeGroupVersion.WithKind("Service"), []healthCase{
		{"cluster IP", svc(corev1.ServiceTypeClusterIP), H},
		{"default type", svc(""), H},
		{"node port", svc(corev1.ServiceTypeNodePort), H},
		{"LB pending", svc(corev1.ServiceTypeLoadBalancer), U},
		{"LB with ingress", svc(corev1.ServiceTypeLoadBalancer, corev1.LoadBalancerIngress{IP: "192.0.2.1"}), H},
	})
}

func TestPVCHealth(t *testing.T) {
	pvc := func(phase corev1.PersistentVolumeClaimPhase) *corev1.PersistentVolumeClaim {
		return &corev1.PersistentVolumeClaim{Status: corev1.PersistentVolumeClaimStatus{Phase: phase}}
	}
	runCases(t, corev1.SchemeGroupVersion.WithKind("PersistentVolumeClaim"), []healthCase{
		{"bound", pvc(corev1.ClaimBound), H},
		{"pending", pvc(corev1.ClaimPending), U},
		{"lost", pvc(corev1.ClaimLost), U},
		{"no status", pvc(""), U},
	})
}

func TestHealthOfKindsWithoutARule(t *testing.T) {
	r := New()
	cm := &unstructured.Unstructured{}
	cm.SetAPIVersion("v1")
	cm.SetKind("ConfigMap")
	if got := r.Health(cm); got.Health != K {
		t.Errorf("ConfigMap: %s, want Unknown", got.Health)
	}
	if got := r.Health(nil); got.Health != K {
		t.Errorf("nil: %s, want Unknown", got.Health)
	}
	// Another version of a known kind is a different GVK: Unknown.
	old := &unstructured.Unstructured{}
	old.SetAPIVersion("apps/v1beta2")
	old.SetKind("Deployment")
	if got := r.Health(old); got.Health != K {
		t.Errorf("apps/v1beta2 Deployment: %s, want Unknown", got.Health)
	}
	// A health rule replaces the built-in one.
	r.SetHealthRule(cm.GroupVersionKind(), func(*unstructured.Unstructured) HealthResult { return healthy("custom") })
	if got := r.Health(cm); got.Health != H || got.Reason != "custom" {
		t.Errorf("custom ConfigMap: %+v", got)
	}
	// A member object that does not decode into the typed struct is Unknown.
	bad := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "spec": "oops"}}
	if got := r.Health(bad); got.Health != K {
		t.Errorf("undecodable Deployment: %s, want Unknown", got.Health)
	}
}
