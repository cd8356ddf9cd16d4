package cli

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/shepherd-io/shepherd/pkg/interpreter"
	"github.com/shepherd-io/shepherd/pkg/scenario"
	"github.com/shepherd-io/shepherd/pkg/scheduler"
)

type benchOptions struct {
	file       string
	output     string
	cpuProfile string
	inOrder    bool
}

func newBenchCommand() *cobra.Command {
	o := &benchOptions{}
	cmd := &cobra.Command{
		Use:   "bench --scenario FILE",
		Short: "Measure the scheduler on a fleet scenario",
		Long: `Schedule every workload of a scenario, one after the other on one goroutine,
against the unchanged fleet, and report how many were placed, why the others
were not (grouped by reason, counts left out), throughput, per-workload
latency percentiles and heap allocations per workload.

With --in-order, each workload is scheduled on the room the earlier ones
left, as "shepherd plan --in-order" does: fewer place on a fleet they fill.

The scenario is loaded and indexed before the clock starts, and with
--in-order the clock and the allocation count stop while a placement's
room is taken: the numbers are those of scheduling alone. The file formats
are those of "shepherd plan".`,
		Example: `  shepherd bench --scenario fleet-1000c-5000w.json

  # JSON for dashboards, and a CPU profile for "go tool pprof"
  shepherd bench --scenario fleet-5000c-10000w.json -o json --cpuprofile cpu.out

  # how many workloads the fleet holds when each uses up room
  shepherd bench --scenario fleet-1000c-5000w.json --in-order`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return o.run(cmd.Context(), cmd.OutOrStdout())
		},
	}
	cmd.Flags().StringVar(&o.file, "scenario", "", "scenario file (JSON fleet scenario or multi-document YAML)")
	cmd.Flags().StringVarP(&o.output, "output", "o", "text", "output format: text or json")
	cmd.Flags().StringVar(&o.cpuProfile, "cpuprofile", "", "write a CPU profile of the scheduling to this file")
	cmd.Flags().BoolVar(&o.inOrder, "in-order", false, "schedule each workload on the room the earlier ones left (default: each on the fleet as given)")
	_ = cmd.MarkFlagRequired("scenario")
	cmd.AddCommand(newBenchE2ECommand(), newBenchHubCommand(), newBenchStormCommand(), newBenchRolloutCommand(), newBenchSoakCommand(), newBenchServicesCommand(), newBenchPeersCommand())
	return cmd
}

// benchReport is the outcome of a bench run.
type benchReport struct {
	Scenario string `json:"scenario,omitempty"`
	Clusters int    `json:"clusters"`
	// InOrder: each workload was scheduled on the room the earlier ones left.
	InOrder       bool           `json:"inOrder,omitempty"`
	Workloads     int            `json:"workloads"`
	Scheduled     int            `json:"scheduled"`
	Unschedulable map[string]int `json:"unschedulable"`
	// WorkloadsPerSecond is workloads / total scheduling time.
	WorkloadsPerSecond float64 `json:"workloadsPerSecond"`
	P50Micros          float64 `json:"p50Micros"`
	P99Micros          float64 `json:"p99Micros"`
	// AllocsPerWorkload is the heap allocations (runtime.MemStats.Mallocs)
	// during scheduling, per workload.
	AllocsPerWorkload float64 `json:"allocsPerWorkload"`
}

func (o *benchOptions) run(ctx context.Context, out io.Writer) error {
	if o.output != "text" && o.output != "json" {
		return fmt.Errorf("--output %q is not supported: use text or json", o.output)
	}
	// Offline: the scenario file is all there is, no hub whose
	// customizations could teach other kinds.
	s, err := scenario.Load(o.file, time.Now(), interpreter.Builtin())
	if err != nil {
		return err
	}
	if len(s.Workloads) == 0 {
		return fmt.Errorf("%s: no workloads to schedule", o.file)
	}
	if o.cpuProfile != "" {
		f, err := os.Create(o.cpuProfile)
		if err != nil {
			return fmt.Errorf("--cpuprofile: %w", err)
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return fmt.Errorf("--cpuprofile: %w", err)
		}
		defer pprof.StopCPUProfile()
	}
	r, err := bench(ctx, s, o.inOrder)
	if err != nil {
		return err
	}
	if o.output == "json" {
		return printJSON(out, r)
	}
	printBench(out, r)
	return nil
}

// bench schedules every workload once and measures; inOrder schedules
// each on the room the earlier ones left, without counting the time and
// allocations of taking it.
func bench(ctx context.Context, s *scenario.Scenario, inOrder bool) (benchReport, error) {
	r := benchReport{Scenario: s.Name, Clusters: s.Snapshot.Len(), InOrder: inOrder, Workloads: len(s.Workloads), Unschedulable: map[string]int{}}
	sched := scheduler.NewDefault()
	latencies := make([]time.Duration, len(s.Workloads))
	categories := make([]string, len(s.Workloads))
	var room *scenario.Room
	if inOrder {
		room = s.Room()
	}
	snap := s.Snapshot
	// Spent taking room (inOrder only): not scheduling.
	var takeTime time.Duration
	var takeMallocs uint64
	runtime.GC() // do not charge the scenario's garbage to scheduling
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	start := time.Now()
	for i, w := range s.Workloads {
		t0 := time.Now()
		res, err := sched.Schedule(ctx, snap, w)
		latencies[i] = time.Since(t0)
		var ue *scheduler.UnschedulableError
		switch {
		case errors.As(err, &ue):
			categories[i] = ue.Category()
		case err != nil:
			return r, err
		}
		if room != nil && err == nil {
			var m0, m1 runtime.MemStats
			t1 := time.Now()
			runtime.ReadMemStats(&m0)
			if err := room.Take(w, res.Targets); err != nil {
				return r, err
			}
			snap = room.Snapshot()
			runtime.ReadMemStats(&m1)
			takeMallocs += m1.Mallocs - m0.Mallocs
			takeTime += time.Since(t1)
		}
		res.Release()
	}
	elapsed := time.Since(start) - takeTime
	runtime.ReadMemStats(&after)
	after.Mallocs -= takeMallocs

	for _, c := range categories {
		if c == "" {
			r.Scheduled++
		} else {
			r.Unschedulable[c]++
		}
	}
	n := float64(len(s.Workloads))
	r.WorkloadsPerSecond = n / elapsed.Seconds()
	r.AllocsPerWorkload = float64(after.Mallocs-before.Mallocs) / n
	slices.Sort(latencies)
	r.P50Micros = micros(percentile(latencies, 50))
	r.P99Micros = micros(percentile(latencies, 99))
	return r, nil
}

// percentile is the nearest-rank percentile of sorted durations.
func percentile(sorted []time.Duration, p int) time.Duration {
	rank := (p*len(sorted) + 99) / 100
	return sorted[max(rank, 1)-1]
}

func micros(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 }

func printBench(out io.Writer, r benchReport) {
	fmt.Fprintf(out, "scenario             %s\n", dash(r.Scenario))
	fmt.Fprintf(out, "clusters             %d\n", r.Clusters)
	if r.InOrder {
		fmt.Fprintf(out, "placed               in order, each on the room the earlier ones left\n")
	}
	fmt.Fprintf(out, "workloads            %d\n", r.Workloads)
	fmt.Fprintf(out, "scheduled            %d\n", r.Scheduled)
	fmt.Fprintf(out, "unschedulable        %d\n", r.Workloads-r.Scheduled)
	type entry struct {
		reason string
		count  int
	}
	var entries []entry
	for reason, count := range r.Unschedulable {
		entries = append(entries, entry{reason, count})
	}
	slices.SortFunc(entries, func(a, b entry) int {
		return cmp.Or(cmp.Compare(b.count, a.count), strings.Compare(a.reason, b.reason))
	})
	for _, e := range entries {
		fmt.Fprintf(out, "  %6d  %s\n", e.count, e.reason)
	}
	fmt.Fprintf(out, "workloads/s          %.0f\n", r.WorkloadsPerSecond)
	fmt.Fprintf(out, "latency p50          %.1f µs\n", r.P50Micros)
	fmt.Fprintf(out, "latency p99          %.1f µs\n", r.P99Micros)
	fmt.Fprintf(out, "allocs per workload  %.1f\n", r.AllocsPerWorkload)
}
