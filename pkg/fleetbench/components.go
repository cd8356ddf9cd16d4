package fleetbench

import (
	"bytes"
	"fmt"
	"sort"

	"github.com/google/pprof/profile"
)

// unlabelled names CPU spent in goroutines without a component label: the
// benchmark's own clients and the Go runtime's (garbage collection runs in
// background workers shared by every component).
const unlabelled = "unlabelled"

// ComponentCPU is one component's CPU during the measured part.
type ComponentCPU struct {
	// Component is the profiler label the local fleet sets: hub (its etcd
	// and kube-apiserver), controllers, member, agent, pod-rescheduler; or
	// unlabelled.
	Component string `json:"component"`
	// SecondsPer1000Workloads is its CPU per 1,000 Deployments.
	SecondsPer1000Workloads float64 `json:"secondsPer1000Workloads"`
	// Share is its fraction of the sampled CPU.
	Share float64 `json:"share"`
}

// componentCPU sums a CPU profile's samples by their component label,
// per 1,000 of workloads, most first (then by name).
func componentCPU(raw []byte, workloads int) ([]ComponentCPU, error) {
	p, err := profile.Parse(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("reading the CPU profile: %w", err)
	}
	idx := -1
	for i, st := range p.SampleType {
		if st.Type == "cpu" && st.Unit == "nanoseconds" {
			idx = i
		}
	}
	if idx < 0 {
		return nil, fmt.Errorf("the CPU profile has no cpu/nanoseconds samples")
	}
	byComponent := map[string]int64{}
	var total int64
	for _, s := range p.Sample {
		c := unlabelled
		if v := s.Label["component"]; len(v) > 0 {
			c = v[0]
		}
		byComponent[c] += s.Value[idx]
		total += s.Value[idx]
	}
	out := make([]ComponentCPU, 0, len(byComponent))
	for c, ns := range byComponent {
		out = append(out, ComponentCPU{
			Component:               c,
			SecondsPer1000Workloads: float64(ns) / 1e9 * 1000 / float64(max(workloads, 1)),
			Share:                   float64(ns) / float64(max(total, 1)),
		})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].SecondsPer1000Workloads != out[j].SecondsPer1000Workloads {
			return out[i].SecondsPer1000Workloads > out[j].SecondsPer1000Workloads
		}
		return out[i].Component < out[j].Component
	})
	return out, nil
}
