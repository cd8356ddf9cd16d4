package cli

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"

	"github.com/shepherd-io/shepherd/internal/bench/fleetbench"
)

func newBenchRolloutCommand() *cobra.Command {
	var (
		o       fleetbench.RolloutOptions
		output  string
		verbose int
	)
	cmd := &cobra.Command{
		Use:   "rollout",
		Short: "Measure a Staged rollout of one image change over simulated Pull clusters against the sum of its waits",
		Long: `Start a hub with the controller manager and --clusters simulated Pull clusters
(registered as "shepherd register" does; one simulator writes what their agents
would: Leases, and every Work applied and Healthy). One Deployment runs on all
of them under a Staged rollout of --stages stages of equal size, each stage's
clusters healthy for --min-success-seconds and --wait-seconds between stages.
Once the first revision runs everywhere, its image is changed and the change
rolled out.

A rollout cannot finish sooner than the sum of its waits (stages x
min-success-seconds + (stages - 1) x wait-seconds): the floor. The report gives
the time from the edit to the rollout's Complete, its ratio to the floor, each
stage's duration as the binding recorded it, and the hub's write requests
during the change per cluster, by verb and resource (Lease renewals, which go
on with or without a rollout, counted apart).`,
		Example: `  shepherd bench rollout
  shepherd bench rollout --clusters 100 --stages 5 --min-success-seconds 2 -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runBench(cmd, output, verbose, o.Validate, func(log logr.Logger) error {
				o.Logger = log
				rep, err := fleetbench.RunRollout(cmd.Context(), o)
				if err != nil {
					return err
				}
				if output == "json" {
					return printJSON(cmd.OutOrStdout(), rep)
				}
				return printRollout(cmd.OutOrStdout(), rep)
			})
		},
	}
	f := cmd.Flags()
	f.IntVar(&o.Clusters, "clusters", fleetbench.DefaultRolloutClusters, "simulated Pull clusters, all running the workload")
	f.IntVar(&o.Stages, "stages", fleetbench.DefaultRolloutStages, "stages of the rollout, of equal size")
	f.Int32Var(&o.MinSuccessSeconds, "min-success-seconds", fleetbench.DefaultRolloutMinSuccessSeconds, "the rollout's minSuccessSeconds")
	f.Int32Var(&o.WaitSeconds, "wait-seconds", fleetbench.DefaultRolloutWaitSeconds, "each stage's waitSeconds")
	f.DurationVar(&o.Timeout, "timeout", fleetbench.DefaultRolloutTimeout, "how long the first revision and then the change may take")
	f.StringVarP(&output, "output", "o", "text", "output format: text or json")
	f.IntVarP(&verbose, "verbose", "v", 0, "log verbosity")
	return cmd
}

// printRollout writes the report as text.
func printRollout(out io.Writer, rep *fleetbench.RolloutReport) error {
	fmt.Fprintf(out, "rollout: one image change over %d simulated Pull clusters in %d stages (minSuccessSeconds %d, waitSeconds %d)\n",
		rep.Clusters, rep.Stages, rep.MinSuccessSeconds, rep.WaitSeconds)
	fmt.Fprintf(out, "complete after %.1f s; floor (the sum of the waits) %.0f s; ratio %.2f\n", rep.CompleteSeconds, rep.FloorSeconds, rep.RatioToFloor)
	stages := make([]string, len(rep.StageSeconds))
	for i, s := range rep.StageSeconds {
		stages[i] = fmt.Sprintf("%.0f", s)
	}
	fmt.Fprintf(out, "stages took (s): %s\n", strings.Join(stages, " "))
	fmt.Fprintf(out, "hub writes: %d, %.2f per cluster (Lease renewals apart: %d); the binding is %d bytes\n",
		rep.HubWrites, rep.HubWritesPerCluster, rep.LeaseWrites, rep.BindingBytes)
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "VERB\tRESOURCE\tPER CLUSTER")
	for _, r := range rep.Writes {
		fmt.Fprintf(w, "%s\t%s\t%.2f\n", r.Verb, resourcePath(r.Resource, r.Subresource), r.PerWorkload)
	}
	return w.Flush()
}

// resourcePath is a resource as a request's path names it:
// "works/status".
func resourcePath(resource, subresource string) string {
	if subresource == "" {
		return resource
	}
	return resource + "/" + subresource
}
