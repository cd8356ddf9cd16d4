package controller

import (
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// Detection says which pod states count as a failure on the node worth
// moving the pod for. A restart in place (what the kubelet does) cannot fix
// these: memory on the node, a NUMA or device mismatch at admission.
type Detection struct {
	// OOMKilled: a container's current or last termination reason is
	// OOMKilled.
	OOMKilled bool
	// CrashLoopBackOff: a container is waiting in CrashLoopBackOff.
	CrashLoopBackOff bool
	// FailedReasons: the pod's phase is Failed with one of these
	// status.reason values. An entry ending in "*" matches by prefix
	// ("OutOf*" matches OutOfcpu, OutOfmemory, OutOfnvidia.com/gpu, ...);
	// "*" matches every Failed pod.
	FailedReasons []string
	// RestartThreshold: a container restarted at least this many times;
	// 0 turns the check off.
	RestartThreshold int32
}

// DefaultDetection matches OOM kills, crash loops, five restarts and the
// kubelet's admission rejections (UnexpectedAdmissionError from device
// plugins, TopologyAffinityError from the NUMA topology manager,
// NodeAffinity, OutOf<resource>). A Failed pod with no reason (its
// containers exited non-zero with restartPolicy Never) is an application
// error, not a node problem, and is not matched.
func DefaultDetection() Detection {
	return Detection{
		OOMKilled:        true,
		CrashLoopBackOff: true,
		FailedReasons:    []string{"UnexpectedAdmissionError", "TopologyAffinityError", "NodeAffinity", "OutOf*"},
		RestartThreshold: 5,
	}
}

// Failure returns why pod counts as failed on its node, or "" when it does
// not.
func (d Detection) Failure(pod *corev1.Pod) string {
	if pod.Status.Phase == corev1.PodFailed && d.matchesFailedReason(pod.Status.Reason) {
		return "Failed:" + pod.Status.Reason
	}
	for _, s := range slices.Concat(pod.Status.InitContainerStatuses, pod.Status.ContainerStatuses) {
		switch {
		case d.OOMKilled && (terminatedBy(s.State, "OOMKilled") || terminatedBy(s.LastTerminationState, "OOMKilled")):
			return "OOMKilled"
		case d.CrashLoopBackOff && s.State.Waiting != nil && s.State.Waiting.Reason == "CrashLoopBackOff":
			return "CrashLoopBackOff"
		case d.RestartThreshold > 0 && s.RestartCount >= d.RestartThreshold:
			return "TooManyRestarts"
		}
	}
	return ""
}

func (d Detection) matchesFailedReason(reason string) bool {
	for _, want := range d.FailedReasons {
		if prefix, ok := strings.CutSuffix(want, "*"); ok {
			if strings.HasPrefix(reason, prefix) {
				return true
			}
		} else if reason == want {
			return true
		}
	}
	return false
}

func terminatedBy(s corev1.ContainerState, reason string) bool {
	return s.Terminated != nil && s.Terminated.Reason == reason
}
