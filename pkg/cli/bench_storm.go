package cli

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"

	"github.com/shepherd-io/shepherd/internal/bench/fleetbench"
	"github.com/shepherd-io/shepherd/pkg/logging"
)

func newBenchStormCommand() *cobra.Command {
	var (
		o       fleetbench.StormOptions
		output  string
		verbose int
	)
	cmd := &cobra.Command{
		Use:   "storm",
		Short: "Measure scheduling latency under a status storm, without and with Shepherd's FlowSchemas",
		Long: `Start a hub with API Priority and Fairness and the controller manager under its
ServiceAccount (as "shepherd up" runs them), --clusters simulated Pull clusters,
and --works Works whose health flaps: --writers goroutines write their status
as fast as the hub answers, under the controller manager's identity. While
this storm runs, --workloads new Deployments are created and each binding's
scheduling latency is measured (first seen to Scheduled, from a watch).

Two phases on the same hub: first without config/flowcontrol's FlowSchemas
(the controller manager's requests all fall into the built-in service-accounts
schema: storm and scheduler in one flow of workload-low), then with them
(the storm queues in shepherd-status, scheduling runs in shepherd-scheduling).
The report gives both phases' p50 and p99, the ratio of the p99s, and the
storm's write rate: what the FlowSchemas cost the storm.

The hub serves --hub-max-in-flight requests at once (60; kube-apiserver's
default is 600): the seats API Priority and Fairness divides among its
priority levels, scaled down with the storm. On a small machine the CPU runs
out long before 600 seats do, and priority levels divide seats, not CPU.`,
		Example: `  shepherd bench storm
  shepherd bench storm --works 2000 --writers 128 --workloads 200 -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runBench(cmd, output, verbose, o.Validate, func(log logr.Logger) error {
				o.Logger = log
				rep, err := fleetbench.RunStorm(cmd.Context(), o)
				if err != nil {
					return err
				}
				if output == "json" {
					return printJSON(cmd.OutOrStdout(), stormJSON{StormReport: rep, P99Ratio: rep.P99Ratio()})
				}
				return printStorm(cmd.OutOrStdout(), rep)
			})
		},
	}
	f := cmd.Flags()
	f.IntVar(&o.Clusters, "clusters", fleetbench.DefaultStormClusters, "simulated Pull clusters (at least 2)")
	f.IntVar(&o.Works, "works", fleetbench.DefaultStormWorks, "Works whose health flaps")
	f.IntVar(&o.Writers, "writers", fleetbench.DefaultStormWriters, "goroutines writing the storm at once")
	f.IntVar(&o.Workloads, "workloads", fleetbench.DefaultStormWorkloads, "Deployments scheduled in each phase")
	f.IntVar(&o.HubMaxInFlight, "hub-max-in-flight", fleetbench.DefaultStormHubMaxInFlight, "requests the hub serves at once: the seats its priority levels divide (kube-apiserver's default is 600)")
	f.DurationVar(&o.Timeout, "timeout", fleetbench.DefaultStormTimeout, "how long each phase may wait for its bindings to be Scheduled")
	f.StringVarP(&output, "output", "o", "text", "output format: text or json")
	f.IntVarP(&verbose, "verbose", "v", 0, "log verbosity")
	return cmd
}

// runBench runs a benchmark command: the output format and the size
// (validate) are checked before anything starts, then run gets the
// command's logger (klog's output goes to it too).
func runBench(cmd *cobra.Command, output string, verbose int, validate func() error, run func(logr.Logger) error) error {
	if output != "text" && output != "json" {
		return fmt.Errorf("--output %q is not supported: use text or json", output)
	}
	if err := validate(); err != nil {
		return err
	}
	log := logging.New(cmd.ErrOrStderr(), verbose)
	logging.Route(log, 1)
	return run(log)
}

// stormJSON is the JSON report: the phases and their ratio.
type stormJSON struct {
	*fleetbench.StormReport
	P99Ratio float64 `json:"p99Ratio"`
}

// printStorm writes the report as a table.
func printStorm(out io.Writer, rep *fleetbench.StormReport) error {
	fmt.Fprintf(out, "storm: %d Works flapping, %d writers, %d simulated clusters, hub serving %d requests at once; %d workloads scheduled per phase\n",
		rep.Works, rep.Writers, rep.Clusters, rep.HubMaxInFlight, rep.Workloads)
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "FLOWSCHEMAS\tSTORM CLASSIFIED AS\tSCHEDULING P50\tSCHEDULING P99\tALL SCHEDULED AFTER\tSTORM WRITES/S\tSTORM ERRORS")
	for _, p := range []struct {
		name  string
		phase fleetbench.StormPhase
	}{{"without", rep.Without}, {"with", rep.With}} {
		fmt.Fprintf(w, "%s\t%s/%s\t%.2f s\t%.2f s\t%.1f s\t%.0f\t%d\n", p.name, p.phase.StatusFlowSchema, p.phase.StatusPriorityLevel,
			p.phase.SchedulingP50Seconds, p.phase.SchedulingP99Seconds, p.phase.ScheduledSeconds, p.phase.StatusWritesPerSecond, p.phase.StatusWriteErrors)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if r := rep.P99Ratio(); r > 0 {
		fmt.Fprintf(out, "scheduling p99 without / with: %.1fx\n", r)
	}
	return nil
}
