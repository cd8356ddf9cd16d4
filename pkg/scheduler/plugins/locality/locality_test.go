package locality

import (
	"reflect"
	"testing"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/scheduler/core"
	"github.com/shepherd-io/shepherd/pkg/scheduler/framework"
	"github.com/shepherd-io/shepherd/pkg/scheduler/framework/fwtest"
)

func TestScore(t *testing.T) {
	snap := fwtest.Snapshot(t, framework.ClusterInfo{Name: "a"}, framework.ClusterInfo{Name: "b"}, framework.ClusterInfo{Name: "c"})
	tests := []struct {
		name     string
		previous []workv1alpha1.TargetCluster
		mode     core.Mode
		want     map[string]int64 // nil: skipped
	}{
		{"held clusters score 100", []workv1alpha1.TargetCluster{{Name: "b", Replicas: 2}, {Name: "c"}}, core.Steady,
			map[string]int64{"a": 0, "b": 100, "c": 100}},
		{"unscheduled targets hold nothing", []workv1alpha1.TargetCluster{{Name: "a", State: workv1alpha1.TargetUnscheduled}, {Name: "c", State: workv1alpha1.TargetBound}}, core.Steady,
			map[string]int64{"a": 0, "b": 0, "c": 100}},
		{"nothing held: skipped", nil, core.Steady, nil},
		{"only unknown clusters held: skipped", []workv1alpha1.TargetCluster{{Name: "gone"}}, core.Steady, nil},
		{"fresh: skipped", []workv1alpha1.TargetCluster{{Name: "a"}}, core.Fresh, nil},
	}
	p, _ := New(nil)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, skipped := fwtest.Score(t, p.(framework.ScorePlugin), snap, &framework.Workload{Previous: tt.previous, Mode: tt.mode})
			if skipped != (tt.want == nil) || (!skipped && !reflect.DeepEqual(got, tt.want)) {
				t.Errorf("got %v (skipped %v), want %v", got, skipped, tt.want)
			}
		})
	}
}
