package controller

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestDetectionFailure(t *testing.T) {
	running := corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}
	withContainer := func(s corev1.ContainerStatus) *corev1.Pod {
		return &corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{s}}}
	}
	failed := func(reason string) *corev1.Pod {
		return &corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodFailed, Reason: reason}}
	}
	tests := []struct {
		name string
		pod  *corev1.Pod
		want string
	}{
		{"healthy", withContainer(corev1.ContainerStatus{State: running}), ""},
		{"last termination OOMKilled", withContainer(corev1.ContainerStatus{State: running, RestartCount: 1,
			LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "OOMKilled"}}}), "OOMKilled"},
		{"crash loop", withContainer(corev1.ContainerStatus{RestartCount: 2,
			State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}}), "CrashLoopBackOff"},
		{"restart threshold", withContainer(corev1.ContainerStatus{State: running, RestartCount: 5}), "TooManyRestarts"},
		{"below restart threshold", withContainer(corev1.ContainerStatus{State: running, RestartCount: 4}), ""},
		{"admission error", failed("UnexpectedAdmissionError"), "Failed:UnexpectedAdmissionError"},
		{"out of a device", failed("OutOfnvidia.com/gpu"), "Failed:OutOfnvidia.com/gpu"},
		{"failed application", failed(""), ""},
		{"evicted", failed("Evicted"), ""},
		{"succeeded", &corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodSucceeded}}, ""},
	}
	d := DefaultDetection()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := d.Failure(tt.pod); got != tt.want {
				t.Errorf("Failure() = %q, want %q", got, tt.want)
			}
		})
	}

	all := Detection{FailedReasons: []string{"*"}}
	if got := all.Failure(failed("")); got != "Failed:" {
		t.Errorf(`"*" does not match a Failed pod without reason: %q`, got)
	}
	if got := all.Failure(withContainer(corev1.ContainerStatus{RestartCount: 100})); got != "" {
		t.Errorf("restart threshold 0 still matches: %q", got)
	}
}
