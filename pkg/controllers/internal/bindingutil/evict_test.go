package bindingutil

import (
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
)

func TestEvict(t *testing.T) {
	now := metav1.NewTime(time.Date(2026, 3, 8, 8, 0, 0, 0, time.UTC))
	earlier := metav1.NewTime(now.Add(-time.Hour))
	for _, tc := range []struct {
		name      string
		ev        Eviction
		history   []workv1alpha1.EvictionHistoryEntry
		tasks     []workv1alpha1.GracefulEvictionTask
		wantTask  bool
		wantGrace int32
		wantHist  int
	}{
		{name: "direct: no task", ev: Eviction{Cluster: "b", Reason: "R", Purge: policyv1alpha1.PurgeDirectly}, wantHist: 1},
		{name: "former direct name: no task", ev: Eviction{Cluster: "b", Reason: "R", Purge: policyv1alpha1.PurgeImmediately}, wantHist: 1},
		{name: "graceful: default grace period", ev: Eviction{Cluster: "b", Reason: "R", Producer: "p", Purge: policyv1alpha1.PurgeGracefully},
			wantTask: true, wantGrace: policyv1alpha1.DefaultGracePeriodSeconds, wantHist: 1},
		{name: "graceful: its grace period", ev: Eviction{Cluster: "b", Reason: "R", Producer: "p", Purge: policyv1alpha1.PurgeGraciously, GracePeriodSeconds: ptr.To[int32](30)},
			wantTask: true, wantGrace: 30, wantHist: 1},
		{name: "never: a task without grace period", ev: Eviction{Cluster: "b", Reason: "R", Producer: "p", Purge: policyv1alpha1.PurgeNever},
			wantTask: true, wantHist: 1},
		{name: "an earlier entry and task of the cluster are replaced", ev: Eviction{Cluster: "b", Reason: "R", Producer: "p", Purge: policyv1alpha1.PurgeGracefully},
			history:  []workv1alpha1.EvictionHistoryEntry{{ClusterName: "a", EvictedAt: earlier}, {ClusterName: "b", EvictedAt: earlier, Reason: "old"}},
			tasks:    []workv1alpha1.GracefulEvictionTask{{FromCluster: "b", Reason: "old"}},
			wantTask: true, wantGrace: policyv1alpha1.DefaultGracePeriodSeconds, wantHist: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := &workv1alpha1.BindingSpec{
				Clusters:              []workv1alpha1.TargetCluster{{Name: "a", Replicas: 2}, {Name: "b", Replicas: 3}},
				EvictionHistory:       tc.history,
				GracefulEvictionTasks: tc.tasks,
			}
			Evict(spec, tc.ev, now)
			if IsActive(spec.Clusters[1]) || !IsActive(spec.Clusters[0]) {
				t.Fatalf("targets %+v, want b Unscheduled only", spec.Clusters)
			}
			if len(spec.EvictionHistory) != tc.wantHist {
				t.Fatalf("history %+v, want %d entries", spec.EvictionHistory, tc.wantHist)
			}
			last := spec.EvictionHistory[len(spec.EvictionHistory)-1]
			if last.ClusterName != "b" || !last.EvictedAt.Equal(&now) || last.Reason != "R" {
				t.Fatalf("last entry %+v", last)
			}
			if !tc.wantTask {
				if len(spec.GracefulEvictionTasks) != 0 {
					t.Fatalf("tasks %+v, want none", spec.GracefulEvictionTasks)
				}
				return
			}
			if len(spec.GracefulEvictionTasks) != 1 {
				t.Fatalf("tasks %+v, want one", spec.GracefulEvictionTasks)
			}
			task := spec.GracefulEvictionTasks[0]
			if task.FromCluster != "b" || *task.Replicas != 3 || task.Reason != "R" || task.Producer != "p" || task.PurgeMode != tc.ev.Purge || !task.CreationTimestamp.Equal(&now) {
				t.Fatalf("task %+v", task)
			}
			if got := ptr.Deref(task.GracePeriodSeconds, 0); got != tc.wantGrace {
				t.Fatalf("grace period %d, want %d", got, tc.wantGrace)
			}
		})
	}
}

func TestEvictHistoryBound(t *testing.T) {
	spec := &workv1alpha1.BindingSpec{Clusters: []workv1alpha1.TargetCluster{{Name: "new"}}}
	for i := range MaxEvictionHistory {
		spec.EvictionHistory = append(spec.EvictionHistory, workv1alpha1.EvictionHistoryEntry{ClusterName: fmt.Sprintf("c%d", i)})
	}
	Evict(spec, Eviction{Cluster: "new", Purge: policyv1alpha1.PurgeDirectly}, metav1.Now())
	if n := len(spec.EvictionHistory); n != MaxEvictionHistory {
		t.Fatalf("%d entries, want %d", n, MaxEvictionHistory)
	}
	if spec.EvictionHistory[0].ClusterName != "c1" || spec.EvictionHistory[MaxEvictionHistory-1].ClusterName != "new" {
		t.Fatalf("oldest %s newest %s, want c1 and new", spec.EvictionHistory[0].ClusterName, spec.EvictionHistory[MaxEvictionHistory-1].ClusterName)
	}
}
