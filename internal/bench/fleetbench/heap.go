package fleetbench

import (
	"bytes"
	"fmt"
	"runtime"
	"runtime/pprof"
	"strings"

	"github.com/google/pprof/profile"
)

// heapSplit is the live heap at one moment: in all (the runtime's count)
// and, from a heap profile's sampled estimate, the part allocated under
// the API servers and etcd and the part allocated elsewhere (Shepherd's
// controllers, their clients and caches).
type heapSplit struct {
	live, servers, controllers float64
	// profile is the heap profile the split was read from.
	profile []byte
}

func (h heapSplit) minus(o heapSplit) heapSplit {
	return heapSplit{live: h.live - o.live, servers: h.servers - o.servers, controllers: h.controllers - o.controllers}
}

// ServicesMemory is the live heap the exported Services added, per
// Service. Everything runs in one process: the hub's and the members'
// API servers and etcd (which store the exports' reports, the import
// Works and every member's imports) and Shepherd's controllers.
type ServicesMemory struct {
	// LiveBytesPerService is the whole process's.
	LiveBytesPerService float64 `json:"liveBytesPerService"`
	// APIServersBytesPerService were allocated under the API servers and
	// etcd (hub and members alike); ControllersBytesPerService elsewhere:
	// Shepherd's controllers with their caches. Both are a heap
	// profile's estimate, sampled.
	APIServersBytesPerService  float64 `json:"apiServersBytesPerService"`
	ControllersBytesPerService float64 `json:"controllersBytesPerService"`
}

// LiveHeap is the process's live heap after two collections, and how a
// heap profile splits it: the hub (its API server and etcd) and the rest
// (the controllers, the simulated agents and the benchmark's own watches).
type LiveHeap struct {
	LiveBytes  float64 `json:"liveBytes"`
	HubBytes   float64 `json:"hubBytes"`
	OtherBytes float64 `json:"otherBytes"`
}

func (h heapSplit) report() LiveHeap {
	return LiveHeap{LiveBytes: h.live, HubBytes: h.servers, OtherBytes: h.controllers}
}

func (h heapSplit) per(services int) ServicesMemory {
	n := float64(max(services, 1))
	return ServicesMemory{LiveBytesPerService: h.live / n, APIServersBytesPerService: h.servers / n, ControllersBytesPerService: h.controllers / n}
}

// serverPackages are the packages whose allocations are the API servers'
// and etcd's: an allocation whose stack passes through one of them is
// theirs.
var serverPackages = []string{
	"go.etcd.io/",
	"k8s.io/apiserver/",
	"k8s.io/apiextensions-apiserver/",
	"k8s.io/kube-aggregator/",
	"k8s.io/kubernetes/",
}

// heapByComponent reads the live heap and splits a heap profile of it.
func heapByComponent() (heapSplit, error) {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	var buf bytes.Buffer
	if err := pprof.Lookup("heap").WriteTo(&buf, 0); err != nil {
		return heapSplit{}, fmt.Errorf("taking a heap profile: %w", err)
	}
	servers, controllers, err := splitHeapProfile(buf.Bytes())
	if err != nil {
		return heapSplit{}, err
	}
	return heapSplit{live: float64(ms.HeapAlloc), servers: servers, controllers: controllers, profile: buf.Bytes()}, nil
}

// splitHeapProfile sums a heap profile's in-use bytes by whether the
// allocation's stack passes through serverPackages.
func splitHeapProfile(raw []byte) (servers, others float64, err error) {
	p, err := profile.Parse(bytes.NewReader(raw))
	if err != nil {
		return 0, 0, fmt.Errorf("reading the heap profile: %w", err)
	}
	idx := -1
	for i, st := range p.SampleType {
		if st.Type == "inuse_space" {
			idx = i
		}
	}
	if idx < 0 {
		return 0, 0, fmt.Errorf("the heap profile has no inuse_space samples")
	}
	for _, s := range p.Sample {
		if allocatedByServers(s) {
			servers += float64(s.Value[idx])
		} else {
			others += float64(s.Value[idx])
		}
	}
	return servers, others, nil
}

func allocatedByServers(s *profile.Sample) bool {
	for _, loc := range s.Location {
		for _, line := range loc.Line {
			if line.Function == nil {
				continue
			}
			for _, p := range serverPackages {
				if strings.HasPrefix(line.Function.Name, p) {
					return true
				}
			}
		}
	}
	return false
}
