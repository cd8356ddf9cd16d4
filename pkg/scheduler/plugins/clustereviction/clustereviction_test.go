package clustereviction

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/scheduler/framework"
	"github.com/shepherd-io/shepherd/pkg/scheduler/framework/fwtest"
)

func TestFilter(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	snap := fwtest.Snapshot(t, framework.ClusterInfo{Name: "a"}, framework.ClusterInfo{Name: "b"}, framework.ClusterInfo{Name: "c"})
	evicted := func(cluster string, ago time.Duration) workv1alpha1.EvictionHistoryEntry {
		return workv1alpha1.EvictionHistoryEntry{ClusterName: cluster, EvictedAt: metav1.NewTime(now.Add(-ago)), Reason: "ApplicationFailure"}
	}
	block := func(secs int32) *policyv1alpha1.FailoverBehavior {
		return &policyv1alpha1.FailoverBehavior{Application: &policyv1alpha1.ApplicationFailoverBehavior{BlockPredecessorSeconds: ptr.To(secs)}}
	}
	tests := []struct {
		name     string
		tasks    []workv1alpha1.GracefulEvictionTask
		history  []workv1alpha1.EvictionHistoryEntry
		failover *policyv1alpha1.FailoverBehavior
		want     map[string]string
	}{
		{name: "nothing", want: map[string]string{}},
		{
			name:  "graceful eviction task",
			tasks: []workv1alpha1.GracefulEvictionTask{{FromCluster: "b", Reason: "TaintUntolerated"}},
			want:  map[string]string{"b": "workload is being evicted from the cluster (TaintUntolerated)"},
		},
		{
			name:    "default window 600s: 9m ago blocked, 11m ago not",
			history: []workv1alpha1.EvictionHistoryEntry{evicted("a", 9*time.Minute), evicted("c", 11*time.Minute)},
			want:    map[string]string{"a": "workload was evicted from the cluster (ApplicationFailure); blocked for another 1m0s"},
		},
		{
			name:     "custom window",
			history:  []workv1alpha1.EvictionHistoryEntry{evicted("a", 9*time.Minute), evicted("c", 11*time.Minute)},
			failover: block(60),
			want:     map[string]string{},
		},
		{
			name:     "window end is exclusive",
			history:  []workv1alpha1.EvictionHistoryEntry{evicted("a", time.Minute)},
			failover: block(60),
			want:     map[string]string{},
		},
		{
			name:     "zero blocks forever",
			history:  []workv1alpha1.EvictionHistoryEntry{evicted("c", 1000*time.Hour)},
			failover: block(0),
			want:     map[string]string{"c": "workload was evicted from the cluster (ApplicationFailure); blocked until the eviction history is cleared"},
		},
		{
			name:    "task wins over history, unknown clusters ignored",
			tasks:   []workv1alpha1.GracefulEvictionTask{{FromCluster: "a", Reason: "ApplicationFailure"}, {FromCluster: "gone", Reason: "x"}},
			history: []workv1alpha1.EvictionHistoryEntry{evicted("a", time.Minute)},
			want:    map[string]string{"a": "workload is being evicted from the cluster (ApplicationFailure)"},
		},
	}
	p, _ := New(nil)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := &framework.Workload{Now: now, GracefulEvictionTasks: tt.tasks, EvictionHistory: tt.history, Failover: tt.failover}
			got := fwtest.Filter(t, p.(framework.FilterPlugin), snap, w)
			for name, st := range got {
				if st.Message() != tt.want[name] {
					t.Errorf("%s: got %q, want %q", name, st.Message(), tt.want[name])
				}
			}
		})
	}
}
