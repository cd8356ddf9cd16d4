package apienablement

import (
	"testing"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/scheduler/framework"
	"github.com/shepherd-io/shepherd/pkg/scheduler/framework/fwtest"
)

func TestFilter(t *testing.T) {
	apps := []string{"apps/v1/Deployment", "v1/Service"}
	snap := fwtest.Snapshot(t,
		framework.ClusterInfo{Name: "serves", Probed: true, APIs: apps},
		framework.ClusterInfo{Name: "jobs-only", Probed: true, APIs: []string{"batch/v1/Job"}},
		framework.ClusterInfo{Name: "probed-empty", Probed: true},
		framework.ClusterInfo{Name: "unprobed", Probed: false},
	)
	tests := []struct {
		name             string
		apiVersion, kind string
		want             map[string]string // cluster -> reason; absent = passes
	}{
		{
			name: "apps/v1 Deployment", apiVersion: "apps/v1", kind: "Deployment",
			want: map[string]string{"jobs-only": "missing apps/v1/Deployment", "probed-empty": "missing apps/v1/Deployment"},
		},
		{
			name: "core group", apiVersion: "v1", kind: "Service",
			want: map[string]string{"jobs-only": "missing v1/Service", "probed-empty": "missing v1/Service"},
		},
		{
			name: "no cluster serves the kind", apiVersion: "example.io/v1", kind: "Widget",
			want: map[string]string{"serves": "missing example.io/v1/Widget", "jobs-only": "missing example.io/v1/Widget", "probed-empty": "missing example.io/v1/Widget"},
		},
		{
			name: "no kind skips", apiVersion: "", kind: "",
			want: map[string]string{},
		},
	}
	p, _ := New(nil)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := &framework.Workload{APIVersion: tt.apiVersion, Kind: tt.kind}
			got := fwtest.Filter(t, p.(framework.FilterPlugin), snap, w)
			for name, st := range got {
				if want := tt.want[name]; st.Message() != want {
					t.Errorf("%s: got %q, want %q", name, st.Message(), want)
				}
			}
		})
	}
}

// TestHeldClustersAreSpared: a cluster the workload runs on is not dropped
// because its discovery lacks the kind (it may have partly failed).
func TestHeldClustersAreSpared(t *testing.T) {
	snap := fwtest.Snapshot(t,
		framework.ClusterInfo{Name: "held", Probed: true, APIs: []string{"v1/Service"}},
		framework.ClusterInfo{Name: "other", Probed: true, APIs: []string{"v1/Service"}},
	)
	w := &framework.Workload{APIVersion: "apps/v1", Kind: "Deployment",
		Previous: []workv1alpha1.TargetCluster{{Name: "held", Replicas: 1, State: workv1alpha1.TargetBound}}}
	p, _ := New(nil)
	got := fwtest.Filter(t, p.(framework.FilterPlugin), snap, w)
	if st := got["held"]; st.Message() != "" {
		t.Errorf("held cluster rejected: %q", st.Message())
	}
	if st := got["other"]; st.Message() != "missing apps/v1/Deployment" {
		t.Errorf("other cluster: %q", st.Message())
	}
}
