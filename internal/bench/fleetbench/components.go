package fleetbench

import (
	"bytes"
	"context"
	"fmt"
	"runtime/pprof"
	"sort"
	"time"

	"github.com/google/pprof/profile"
	"k8s.io/client-go/rest"

	"github.com/shepherd-io/shepherd/internal/bench/hubbench"
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
	byComponent, total, err := cpuByLabel(raw)
	if err != nil {
		return nil, err
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

// cpuByLabel sums a CPU profile's nanoseconds by component label, and in
// all.
func cpuByLabel(raw []byte) (map[string]int64, int64, error) {
	p, err := profile.Parse(bytes.NewReader(raw))
	if err != nil {
		return nil, 0, fmt.Errorf("reading the CPU profile: %w", err)
	}
	idx := -1
	for i, st := range p.SampleType {
		if st.Type == "cpu" && st.Unit == "nanoseconds" {
			idx = i
		}
	}
	if idx < 0 {
		return nil, 0, fmt.Errorf("the CPU profile has no cpu/nanoseconds samples")
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
	return byComponent, total, nil
}

// floorWrites is how many floor objects the run writes (three times each)
// to measure the floor.
const floorWrites = 300

// floorCost measures, in this run's hub, the CPU the hub spends on one
// write of the floor (hubbench's cheapest custom resource), from the
// profile's hub label as the workloads' hub CPU is: the baseline the hub's
// cost per workload is compared with.
func floorCost(ctx context.Context, cfg *rest.Config) (time.Duration, error) {
	var prof bytes.Buffer
	if err := pprof.StartCPUProfile(&prof); err != nil {
		return 0, fmt.Errorf("starting the CPU profile: %w", err)
	}
	writes, err := hubbench.FloorWrites(ctx, cfg, floorWrites, 8)
	pprof.StopCPUProfile()
	if err != nil {
		return 0, fmt.Errorf("measuring the floor: %w", err)
	}
	byComponent, _, err := cpuByLabel(prof.Bytes())
	if err != nil {
		return 0, err
	}
	return time.Duration(byComponent["hub"] / int64(max(writes, 1))), nil
}
