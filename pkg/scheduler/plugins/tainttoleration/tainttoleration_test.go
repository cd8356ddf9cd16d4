package tainttoleration

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/scheduler/framework"
	"github.com/shepherd-io/shepherd/pkg/scheduler/framework/fwtest"
)

func TestFilter(t *testing.T) {
	maint := corev1.Taint{Key: "maintenance", Value: "true", Effect: corev1.TaintEffectNoSchedule}
	notReady := corev1.Taint{Key: "cluster.shepherd.io/not-ready", Effect: corev1.TaintEffectNoExecute}
	soft := corev1.Taint{Key: "soft", Value: "x", Effect: corev1.TaintEffectPreferNoSchedule}
	snap := fwtest.Snapshot(t,
		framework.ClusterInfo{Name: "clean"},
		framework.ClusterInfo{Name: "maint", Taints: []corev1.Taint{maint}},
		framework.ClusterInfo{Name: "not-ready", Taints: []corev1.Taint{notReady}},
		framework.ClusterInfo{Name: "both", Taints: []corev1.Taint{notReady, maint}},
		framework.ClusterInfo{Name: "soft", Taints: []corev1.Taint{soft}},
	)
	const (
		maintMsg    = "untolerated taint {maintenance=true:NoSchedule}"
		notReadyMsg = "untolerated taint {cluster.shepherd.io/not-ready:NoExecute}"
	)
	tests := []struct {
		name        string
		tolerations []corev1.Toleration
		want        map[string]string
	}{
		{"no tolerations", nil, map[string]string{"maint": maintMsg, "not-ready": notReadyMsg, "both": notReadyMsg}},
		{"Exists on key", []corev1.Toleration{{Key: "maintenance", Operator: corev1.TolerationOpExists}},
			map[string]string{"not-ready": notReadyMsg, "both": notReadyMsg}},
		{"Equal on value", []corev1.Toleration{{Key: "maintenance", Operator: corev1.TolerationOpEqual, Value: "true"}},
			map[string]string{"not-ready": notReadyMsg, "both": notReadyMsg}},
		{"empty operator means Equal", []corev1.Toleration{{Key: "maintenance", Value: "true"}},
			map[string]string{"not-ready": notReadyMsg, "both": notReadyMsg}},
		{"Equal with another value", []corev1.Toleration{{Key: "maintenance", Operator: corev1.TolerationOpEqual, Value: "false"}},
			map[string]string{"maint": maintMsg, "not-ready": notReadyMsg, "both": notReadyMsg}},
		{"effect must match", []corev1.Toleration{{Key: "maintenance", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute}},
			map[string]string{"maint": maintMsg, "not-ready": notReadyMsg, "both": notReadyMsg}},
		{"empty key Exists tolerates all", []corev1.Toleration{{Operator: corev1.TolerationOpExists}}, map[string]string{}},
		{"both tolerated", []corev1.Toleration{
			{Key: "maintenance", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
			{Key: "cluster.shepherd.io/not-ready", Operator: corev1.TolerationOpExists},
		}, map[string]string{}},
	}
	p, _ := New(nil)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := &framework.Workload{Placement: &policyv1alpha1.Placement{ClusterTolerations: tt.tolerations}}
			got := fwtest.Filter(t, p.(framework.FilterPlugin), snap, w)
			for name, st := range got {
				if st.Message() != tt.want[name] {
					t.Errorf("%s: got %q, want %q", name, st.Message(), tt.want[name])
				}
			}
		})
	}
}

// TestHeldClustersAreSpared: a taint keeps new placements off; it never
// removes the workload from a cluster it runs on (a target that is not
// Unscheduled). Failover does that.
func TestHeldClustersAreSpared(t *testing.T) {
	maint := corev1.Taint{Key: "maintenance", Value: "true", Effect: corev1.TaintEffectNoSchedule}
	down := corev1.Taint{Key: "down", Effect: corev1.TaintEffectNoExecute}
	snap := fwtest.Snapshot(t,
		framework.ClusterInfo{Name: "held", Taints: []corev1.Taint{maint}},
		framework.ClusterInfo{Name: "held-noexecute", Taints: []corev1.Taint{down}},
		framework.ClusterInfo{Name: "leaving", Taints: []corev1.Taint{maint}},
		framework.ClusterInfo{Name: "new", Taints: []corev1.Taint{maint}},
	)
	w := &framework.Workload{Previous: []workv1alpha1.TargetCluster{
		{Name: "held", Replicas: 2, State: workv1alpha1.TargetBound},
		{Name: "held-noexecute", Replicas: 2, State: workv1alpha1.TargetBound},
		{Name: "leaving", Replicas: 2, State: workv1alpha1.TargetUnscheduled},
	}}
	p, _ := New(nil)
	got := fwtest.Filter(t, p.(framework.FilterPlugin), snap, w)
	want := map[string]string{"leaving": "untolerated taint {maintenance=true:NoSchedule}", "new": "untolerated taint {maintenance=true:NoSchedule}"}
	for name, st := range got {
		if st.Message() != want[name] {
			t.Errorf("%s: got %q, want %q", name, st.Message(), want[name])
		}
	}
}
