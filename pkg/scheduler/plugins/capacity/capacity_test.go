package capacity

import (
	"reflect"
	"testing"

	"github.com/shepherd-io/shepherd/pkg/scheduler/framework"
	"github.com/shepherd-io/shepherd/pkg/scheduler/framework/fwtest"
)

func TestScore(t *testing.T) {
	snap := fwtest.Snapshot(t,
		framework.ClusterInfo{Name: "a", Available: framework.Resources{MilliCPU: 8000, Memory: 1 << 40, Pods: 100}},
		framework.ClusterInfo{Name: "b", Available: framework.Resources{MilliCPU: 2000, Memory: 1 << 40, Pods: 100}},
		framework.ClusterInfo{Name: "c", Available: framework.Resources{MilliCPU: 8000, Memory: 1 << 40, Pods: 3}},
		framework.ClusterInfo{Name: "d"},
	)
	tests := []struct {
		name string
		req  framework.Resources
		want map[string]int64
	}{
		{"relative to the best", framework.Resources{MilliCPU: 1000}, map[string]int64{"a": 100, "b": 25, "c": 37, "d": 0}},
		{"nothing fits anywhere", framework.Resources{MilliCPU: 100000}, map[string]int64{"a": 0, "b": 0, "c": 0, "d": 0}},
		{"no request: skipped", framework.Resources{}, nil},
	}
	p, _ := New(nil)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, skipped := fwtest.Score(t, p.(framework.ScorePlugin), snap, &framework.Workload{Replicas: 1, Request: tt.req})
			if skipped != (tt.want == nil) || (!skipped && !reflect.DeepEqual(got, tt.want)) {
				t.Errorf("got %v (skipped %v), want %v", got, skipped, tt.want)
			}
		})
	}
}
