package fleetbench

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
)

// cpuProfile builds a CPU profile with one sample per entry: its
// nanoseconds and its component label ("" for none).
func cpuProfile(t *testing.T, samples map[string]int64) []byte {
	t.Helper()
	p := &profile.Profile{SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}}}
	for c, ns := range samples {
		s := &profile.Sample{Value: []int64{1, ns}}
		if c != "" {
			s.Label = map[string][]string{"component": {c}}
		}
		p.Sample = append(p.Sample, s)
	}
	var b bytes.Buffer
	if err := p.Write(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestComponentCPU(t *testing.T) {
	raw := cpuProfile(t, map[string]int64{"hub": 6e9, "controllers": 3e9, "": 1e9})
	got, err := componentCPU(raw, 500)
	if err != nil {
		t.Fatal(err)
	}
	want := []ComponentCPU{
		{Component: "hub", SecondsPer1000Workloads: 12, Share: 0.6},
		{Component: "controllers", SecondsPer1000Workloads: 6, Share: 0.3},
		{Component: "unlabelled", SecondsPer1000Workloads: 2, Share: 0.1},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
}

func TestComponentCPURefusesBadProfiles(t *testing.T) {
	if _, err := componentCPU([]byte("not a profile"), 1); err == nil || !strings.Contains(err.Error(), "reading the CPU profile") {
		t.Errorf("garbage: %v", err)
	}
	p := &profile.Profile{SampleType: []*profile.ValueType{{Type: "alloc_space", Unit: "bytes"}}}
	var b bytes.Buffer
	if err := p.Write(&b); err != nil {
		t.Fatal(err)
	}
	if _, err := componentCPU(b.Bytes(), 1); err == nil || !strings.Contains(err.Error(), "no cpu/nanoseconds") {
		t.Errorf("a heap profile: %v", err)
	}
}

func TestChangedParts(t *testing.T) {
	base := func() *workv1alpha1.ResourceBinding {
		return &workv1alpha1.ResourceBinding{Spec: workv1alpha1.BindingSpec{Replicas: 2}}
	}
	for _, tc := range []struct {
		name   string
		change func(b *workv1alpha1.ResourceBinding)
		want   string
	}{
		{"nothing but metadata", func(b *workv1alpha1.ResourceBinding) { b.Labels = map[string]string{"a": "b"} }, "metadata"},
		{"targets", func(b *workv1alpha1.ResourceBinding) { b.Spec.Clusters = []workv1alpha1.TargetCluster{{Name: "m1"}} }, "spec"},
		{"the scheduler's status", func(b *workv1alpha1.ResourceBinding) {
			b.Status.Conditions = []metav1.Condition{{Type: "Scheduled"}}
			b.Status.SchedulingDecisions = []workv1alpha1.ClusterDecision{{ClusterName: "m1"}}
		}, "status.conditions+status.scheduling"},
		{"aggregation", func(b *workv1alpha1.ResourceBinding) {
			b.Status.AggregatedStatus = []workv1alpha1.AggregatedStatusItem{{ClusterName: "m1"}}
		}, "status.aggregatedStatus"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := base()
			tc.change(n)
			if got := changedParts(base(), n); got != tc.want {
				t.Errorf("changedParts = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestCountStored(t *testing.T) {
	p := &progress{stored: map[string]int64{}, versions: map[string]int{}}
	rb := &workv1alpha1.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Name: "web"}}
	p.countStored(rb)
	p.countStored(rb)
	p.countStored("not an object")
	b, _ := json.Marshal(rb)
	if got := p.storedBytes(); len(got) != 1 || got["ResourceBinding"] != 2*int64(len(b)) {
		t.Errorf("stored %v, want ResourceBinding %d", got, 2*len(b))
	}
	if got := p.versionCount(); got != 2 {
		t.Errorf("versions %d, want 2", got)
	}
}
