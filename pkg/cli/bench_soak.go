package cli

import (
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/shepherd-io/shepherd/internal/bench/fleetbench"
	"github.com/shepherd-io/shepherd/pkg/logging"
)

func newBenchSoakCommand() *cobra.Command {
	var (
		o       fleetbench.SoakOptions
		output  string
		verbose int
	)
	cmd := &cobra.Command{
		Use:   "soak",
		Short: "Load the hub for a long time with a steady churn and watch for leaks",
		Long: `Start a hub with its controllers and --simulated-pull-clusters Pull clusters
(served by one in-process simulator of their agents, as "bench e2e" does),
place --workloads Deployments over them with --policies policies (each
dividing its workloads over two clusters), then change them at --churn
changes a second for --duration: scales, image edits, and deletions with the
workload created again, drawn from --seed.

--samples times over the run it reports the process's live heap (after a
garbage collection), resident memory and goroutines, the hub's writes a
second, and the scheduling latency of that window's scales (from the write
to the binding Scheduled with the new replicas). The heap may grow by at
most --max-heap-growth from the median of the first quarter of the samples
to the last: more is reported as outside the bound. When the churn stops, the run waits, for at most 15
minutes, until the fleet holds what the templates say: each workload has
one binding with its replicas on two clusters (one for a single replica), a
Work per target and none more, every Work applied, and nothing left of
deleted workloads. It reports how long that took and what is still wrong at
the deadline. The exit status is non-zero when a check fails or the heap
grew beyond the bound.`,
		Example: `  # an hour, ten thousand workloads on a hundred clusters
  shepherd bench soak --duration 1h --workloads 10000 --simulated-pull-clusters 100 --churn 10
  shepherd bench soak --duration 5m --workloads 500 -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if output != "text" && output != "json" {
				return fmt.Errorf("--output %q is not supported: use text or json", output)
			}
			log := logging.New(cmd.ErrOrStderr(), verbose)
			logging.Route(log, 1)
			o.Logger = log
			rep, err := fleetbench.Soak(cmd.Context(), o)
			if err != nil {
				return err
			}
			if output == "json" {
				if err := printJSON(cmd.OutOrStdout(), rep); err != nil {
					return err
				}
			} else {
				w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
				fmt.Fprintf(w, "workloads\t%d on %d simulated Pull clusters, loaded in %.0f s\n", rep.Workloads, rep.SimulatedPullClusters, rep.LoadSeconds)
				fmt.Fprintf(w, "churn\t%.1f changes/s asked for %s by %d writers (seed %d): %.1f/s made, %d missed with every writer busy\n",
					rep.ChurnPerSecond, time.Duration(rep.DurationSeconds*float64(time.Second)), rep.ChurnWriters, rep.Seed, rep.AchievedChurnPerSecond, rep.MissedTicks)
				fmt.Fprintf(w, "at\tlive heap\tRSS\tgoroutines\thub writes/s\tscales\tscheduling p50\tp99\n")
				for _, s := range rep.Samples {
					fmt.Fprintf(w, "%s\t%.0f MiB\t%.0f MiB\t%d\t%.0f\t%d\t%.0f ms\t%.0f ms\n", time.Duration(s.AtSeconds*float64(time.Second)).Round(time.Second),
						mib(s.LiveHeapBytes), mib(s.RSSBytes), s.Goroutines, s.HubWritesPerSecond, s.Scales, s.SchedulingP50Millis, s.SchedulingP99Millis)
				}
				fmt.Fprintf(w, "live heap growth\t%+.1f%% (bound %.0f%%)\n", 100*rep.HeapGrowth, 100*rep.MaxHeapGrowth)
				fmt.Fprintf(w, "changes refused for overload\t%d (skipped; timeouts, 5xx, 429)\n", rep.Refused)
				fmt.Fprintf(w, "converged after the churn\t%.1f s\n", rep.ConvergeSeconds)
				fmt.Fprintf(w, "invariant violations\t%d\n", len(rep.Violations))
				for _, v := range rep.Violations[:min(len(rep.Violations), 20)] {
					fmt.Fprintf(w, "  %s\t\n", v)
				}
				if err := w.Flush(); err != nil {
					return err
				}
			}
			if len(rep.Violations) > 0 {
				return fmt.Errorf("%d invariant violations", len(rep.Violations))
			}
			if !rep.WithinBound {
				return fmt.Errorf("the live heap grew %.1f%%, beyond the bound of %.0f%%", 100*rep.HeapGrowth, 100*rep.MaxHeapGrowth)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.DurationVar(&o.Duration, "duration", time.Hour, "how long the churn lasts")
	f.IntVar(&o.Workloads, "workloads", 10000, "Deployments placed before the churn")
	f.IntVar(&o.Policies, "policies", 100, "PropagationPolicies the workloads are spread over")
	f.IntVar(&o.SimulatedPullClusters, "simulated-pull-clusters", 100, "Pull clusters registered with no member behind them (at least 2)")
	f.Float64Var(&o.ChurnPerSecond, "churn", 10, "changes a second during the soak")
	f.IntVar(&o.ChurnWriters, "churn-writers", fleetbench.DefaultChurnWriters, "writers making the changes at once, each on its own share of the workloads (not negative; 0 takes the default): the asked rate holds while each change takes up to this many gaps between changes")
	f.IntVar(&o.Samples, "samples", 12, "samples over the duration (not negative; 0 takes 12)")
	f.Float64Var(&o.MaxHeapGrowth, "max-heap-growth", 0.2, "the live heap's allowed growth from the median of the first quarter of the samples to the last, as a fraction (not negative; 0 takes 0.2)")
	f.Uint64Var(&o.Seed, "seed", 1, "seed of the churn")
	f.StringVar(&o.DataDir, "data-dir", "", "empty directory for the fleet (default: a temporary one, removed afterwards)")
	f.StringVarP(&output, "output", "o", "text", "output format: text or json")
	f.IntVarP(&verbose, "verbose", "v", 0, "log verbosity")
	return cmd
}
