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

	"github.com/shepherd-io/shepherd/pkg/scenario"
	"github.com/shepherd-io/shepherd/pkg/scheduler"
)

type benchOptions struct {
	file       string
	output     string
	cpuProfile string
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

The scenario is loaded and indexed before the clock starts: the numbers are
those of scheduling alone. The file formats are those of "shepherd plan".`,
		Example: `  shepherd bench --scenario fleet-1000c-5000w.json

  # JSON for dashboards, and a CPU profile for "go tool pprof"
  shepherd bench --scenario fleet-5000c-10000w.json -o json --cpuprofile cpu.out`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return o.run(cmd.Context(), cmd.OutOrStdout())
		},
	}
	cmd.Flags().StringVar(&o.file, "scenario", "", "scenario file (JSON fleet scenario or multi-document YAML)")
	cmd.Flags().StringVarP(&o.output, "output", "o", "text", "output format: text or json")
	cmd.Flags().StringVar(&o.cpuProfile, "cpuprofile", "", "write a CPU profile of the scheduling to this file")
	_ = cmd.MarkFlagRequired("scenario")
	cmd.AddCommand(newBenchE2ECommand(), newBenchHubCommand(), newBenchStormCommand())
	return cmd
}

// benchReport is the outcome of a bench run.
type benchReport struct {
	Scenario      string         `json:"scenario,omitempty"`
	Clusters      int            `json:"clusters"`
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
	s, err := scenario.Load(o.file, time.Now())
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
	r, err := bench(ctx, s)
	if err != nil {
		return err
	}
	if o.output == "json" {
		return printJSON(out, r)
	}
	printBench(out, r)
	return nil
}

// bench schedules every workload once and measures.
func bench(ctx context.Context, s *scenario.Scenario) (benchReport, error) {
	r := benchReport{Scenario: s.Name, Clusters: s.Snapshot.Len(), Workloads: len(s.Workloads), Unschedulable: map[string]int{}}
	sched := scheduler.NewDefault()
	latencies := make([]time.Duration, len(s.Workloads))
	categories := make([]string, len(s.Workloads))
	runtime.GC() // do not charge the scenario's garbage to scheduling
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	start := time.Now()
	for i, w := range s.Workloads {
		t0 := time.Now()
		res, err := sched.Schedule(ctx, s.Snapshot, w)
		latencies[i] = time.Since(t0)
		var ue *scheduler.UnschedulableError
		switch {
		case errors.As(err, &ue):
			categories[i] = ue.Category()
		case err != nil:
			return r, err
		}
		res.Release()
	}
	elapsed := time.Since(start)
	runtime.ReadMemStats(&after)

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
