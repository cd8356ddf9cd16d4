package controller

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/shepherd-io/shepherd/pkg/podrescheduler/annotations"
)

func TestRecreated(t *testing.T) {
	old := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: "ns", Name: "batch", UID: "u1", ResourceVersion: "7",
			Labels:      map[string]string{"app": "batch"},
			Annotations: map[string]string{annotations.SchedulingRetries: "2", "team": "a"},
		},
		Spec: corev1.PodSpec{
			NodeName:            "node-a",
			Containers:          []corev1.Container{{Name: "c", Image: "busybox"}},
			EphemeralContainers: []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: "debug"}}},
		},
		Status: corev1.PodStatus{Phase: corev1.PodRunning},
	}
	s, _, _ := annotations.Read(old.Annotations)
	got := recreated(old, s.Record("node-a", "u1"))

	if got.Name != "batch-retry-1" || got.UID != "" || got.ResourceVersion != "" || got.Status.Phase != "" {
		t.Errorf("metadata/status not reset: name=%s uid=%s rv=%s phase=%s", got.Name, got.UID, got.ResourceVersion, got.Status.Phase)
	}
	if got.Spec.NodeName != "" || got.Spec.EphemeralContainers != nil || got.Spec.Containers[0].Image != "busybox" {
		t.Errorf("spec not carried over unbound: %+v", got.Spec)
	}
	want := map[string]string{
		"team": "a", annotations.SchedulingRetries: "2", annotations.ReschedulingCount: "1",
		annotations.ScheduledNodes: "node-a", annotations.FailedPods: "u1", annotations.ExcludedNodes: "node-a",
		annotations.RescheduledFrom: "u1", annotations.OriginalName: "batch",
	}
	for k, v := range want {
		if got.Annotations[k] != v {
			t.Errorf("annotation %s = %q, want %q", k, got.Annotations[k], v)
		}
	}
	if got.Labels["app"] != "batch" {
		t.Errorf("labels lost: %v", got.Labels)
	}

	// The second replacement keeps the original name as its base.
	second := recreated(got, annotations.State{Retries: 2, Count: 1}.Record("node-b", "u2"))
	if second.Name != "batch-retry-2" {
		t.Errorf("second replacement named %s", second.Name)
	}
}

func TestReplacementNameIsADNSLabel(t *testing.T) {
	name := replacementName(strings.Repeat("a", 55)+"-b", 12)
	if len(name) > maxPodNameLength || strings.Contains(name, "--") {
		t.Errorf("replacementName() = %q (%d chars)", name, len(name))
	}
}
