package fleetbench

import (
	"bufio"
	"os"
	"runtime"
	"strconv"
	"strings"
)

// MemoryStats is the process's memory at one moment.
type MemoryStats struct {
	// RSSBytes and PeakRSSBytes are the resident set now and at its
	// highest (Linux's VmRSS and VmHWM; 0 elsewhere).
	RSSBytes     uint64 `json:"rssBytes"`
	PeakRSSBytes uint64 `json:"peakRSSBytes"`
	// HeapInuseBytes is the Go heap in use; Goroutines the goroutines
	// running: a count that grows with the clusters would mean a
	// goroutine per cluster.
	HeapInuseBytes uint64 `json:"heapInuseBytes"`
	Goroutines     int    `json:"goroutines"`
}

func memoryNow() MemoryStats {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	out := MemoryStats{HeapInuseBytes: ms.HeapInuse, Goroutines: runtime.NumGoroutine()}
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return out
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		key, val, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		fields := strings.Fields(val)
		if len(fields) != 2 || fields[1] != "kB" {
			continue
		}
		kb, err := strconv.ParseUint(fields[0], 10, 64)
		if err != nil {
			continue
		}
		switch key {
		case "VmRSS":
			out.RSSBytes = kb * 1024
		case "VmHWM":
			out.PeakRSSBytes = kb * 1024
		}
	}
	return out
}
