package fleetbench

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
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
