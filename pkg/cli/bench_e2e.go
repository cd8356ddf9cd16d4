package cli

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/shepherd-io/shepherd/internal/bench/fleetbench"
	"github.com/shepherd-io/shepherd/pkg/logging"
)

// topRequests is how many lines of API requests the text output shows;
// -o json has them all.
const topRequests = 12

func newBenchE2ECommand() *cobra.Command {
	var (
		o          fleetbench.Options
		output     string
		verbose    int
		cpuProfile string
	)
	cmd := &cobra.Command{
		Use:   "e2e",
		Short: "Measure the whole propagation loop through real API servers",
		Long: `Start a local fleet (hub, members, controllers) in a temporary directory,
create --policies PropagationPolicies and --deployments Deployments on the hub,
and measure how long until every binding is Scheduled and every Work is
applied to its member, and the bindings scheduled per second through the
hub's API server.

Each stage is also measured on its own, from a watch: the scheduler's rate
and latency from each binding's creation to Scheduled, the execution
controller's from each Work's creation to Applied. The API requests by verb
and resource and the reconciles per controller show where the work went;
each controller's mean reconcile time and mean wait in its queue show which
stage the pipeline waits for (a long wait in the queue) and which waits on
its API calls (long reconciles).
--cpuprofile profiles the measured part; its samples carry a "component"
label (hub, member, controllers, pod-rescheduler) for "go tool pprof -tags".
--members-api-only runs members without controllers, scheduler or pods, to
measure the hub as if members had machines of their own.

--simulated-pull-clusters N registers N Pull clusters as "shepherd register"
does, with no member behind them: one simulator in the process writes what
each one's agent would (its Cluster's status, a Lease renewal every 10 s, and
for every Work that it was applied and is Healthy), so the hub can be measured
at the scale of a thousand clusters on one machine. The report adds the
process's memory and goroutines once every Work was applied.

--capacity F gives members finite room: two nodes each, sized so the fleet
holds about F (0 to 1) of all the replicas, each replica asking for 100m
CPU, divided by dynamic weights. The run ends when every binding is
Scheduled or Unschedulable, every Work applied and the members' pods
settled, and reports what the hub placed against the members' room: replicas
placed beyond a member's nodes, pods left Pending in members (the goal is 0)
and workloads Unschedulable on the hub.`,
		Example: `  shepherd bench e2e --members 20 --deployments 1000 --policies 10
  shepherd bench e2e -o json
  # a fleet with room for 60% of the replicas: 0 Pending is the goal
  shepherd bench e2e --members 20 --deployments 1000 --capacity 0.6
  # the hub with a thousand clusters and ten thousand workloads
  shepherd bench e2e --members 0 --simulated-pull-clusters 1000 --deployments 10000 --policies 100
  # profile the hub pipeline and the members together
  shepherd bench e2e --cpuprofile e2e.out && go tool pprof -top e2e.out`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if output != "text" && output != "json" {
				return fmt.Errorf("--output %q is not supported: use text or json", output)
			}
			log := logging.New(cmd.ErrOrStderr(), verbose)
			logging.Route(log, 1)
			o.Logger = log
			if o.DataDir != "" {
				dir, err := filepath.Abs(o.DataDir)
				if err != nil {
					return err
				}
				if _, err := os.Stat(filepath.Join(dir, "kubeconfig")); err == nil {
					return fmt.Errorf("--data-dir %s already holds a fleet: use an empty directory", dir)
				}
				o.DataDir = dir
			}
			if cpuProfile != "" {
				f, err := os.Create(cpuProfile)
				if err != nil {
					return fmt.Errorf("--cpuprofile: %w", err)
				}
				defer f.Close()
				o.CPUProfile = f
			}
			if o.Members < 0 || o.SimulatedPullClusters < 0 || o.Members+o.SimulatedPullClusters == 0 {
				return fmt.Errorf("--members %d and --simulated-pull-clusters %d: neither may be negative, and together they must be at least 1", o.Members, o.SimulatedPullClusters)
			}
			if o.Timeout <= 0 {
				return fmt.Errorf("--timeout %s must be positive", o.Timeout)
			}
			if o.Deployments < 1 || o.Policies < 1 {
				return fmt.Errorf("--deployments %d and --policies %d must each be at least 1", o.Deployments, o.Policies)
			}
			if o.Capacity < 0 || o.Capacity > 1 {
				return fmt.Errorf("--capacity %g: give the share of all replicas the members hold, above 0 and at most 1 (for example 0.6), or 0 for room for everything", o.Capacity)
			}
			if o.Capacity > 0 && (o.MembersAPIOnly || o.SimulatedPullClusters > 0) {
				return fmt.Errorf("--capacity needs members that schedule pods: it cannot be combined with --members-api-only or --simulated-pull-clusters")
			}
			rep, err := fleetbench.Run(cmd.Context(), o)
			if err != nil {
				return err
			}
			if output == "json" {
				return printJSON(cmd.OutOrStdout(), rep)
			}
			w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			members := fmt.Sprint(rep.Members)
			if rep.MembersAPIOnly {
				members += " (API only)"
			}
			fmt.Fprintf(w, "members\t%s\ndeployments\t%d\npolicies\t%d\n", members, rep.Deployments, rep.Policies)
			if rep.SimulatedPullClusters > 0 {
				fmt.Fprintf(w, "simulated Pull clusters\t%d (registered in %.1f s)\n", rep.SimulatedPullClusters, rep.RegisterSeconds)
			}
			fmt.Fprintf(w, "fleet start\t%.1f s\ncreate\t%.1f s\n", rep.FleetStartSeconds, rep.CreateSeconds)
			fmt.Fprintf(w, "all scheduled after\t%.1f s\nall applied after\t%.1f s (%d works)\n", rep.ScheduledSeconds, rep.AppliedSeconds, rep.Works)
			fmt.Fprintf(w, "bindings scheduled/s\t%.0f (from the first Deployment created)\n", rep.BindingsScheduledPerSecond)
			fmt.Fprintf(w, "last binding created after\t%.1f s\n", rep.Scheduler.LastSeenSeconds)
			fmt.Fprintf(w, "scheduler bindings/s\t%.0f (from the first binding created)\n", rep.Scheduler.PerSecond)
			fmt.Fprintf(w, "scheduling latency\tp50 %.2f s, p99 %.2f s\n", rep.Scheduler.LatencyP50Seconds, rep.Scheduler.LatencyP99Seconds)
			fmt.Fprintf(w, "last Work created after\t%.1f s\n", rep.Execution.LastSeenSeconds)
			fmt.Fprintf(w, "Works applied/s\t%.0f (from the first Work created)\n", rep.Execution.PerSecond)
			fmt.Fprintf(w, "apply latency\tp50 %.2f s, p99 %.2f s\n", rep.Execution.LatencyP50Seconds, rep.Execution.LatencyP99Seconds)
			fmt.Fprintf(w, "process CPU per 1,000 workloads\t%.1f s (hub, controllers and members)\n", rep.ProcessCPUSecondsPer1000Workloads)
			for _, c := range rep.CPUByComponent {
				fmt.Fprintf(w, "  %s\t%.1f s (%.0f%%)\n", c.Component, c.SecondsPer1000Workloads, 100*c.Share)
			}
			var writes float64
			for _, r := range rep.WritesPerWorkload {
				writes += r.PerWorkload
			}
			fmt.Fprintf(w, "writes per workload\t%.1f (hub and members; -o json has them by verb and resource)\n", writes)
			fmt.Fprintf(w, "API requests, hub and members (top %d)\t\n", min(len(rep.APIRequests), topRequests))
			for _, r := range rep.APIRequests[:min(len(rep.APIRequests), topRequests)] {
				res := r.Resource
				if r.Subresource != "" {
					res += "/" + r.Subresource
				}
				fmt.Fprintf(w, "  %s %s\t%d\n", r.Verb, res, r.Count)
			}
			fmt.Fprintf(w, "hub CPU against the floor\t%.2fx (%.1f ms per workload for %.1f writes; a floor write costs it %.2f ms)\n",
				rep.HubCPURatioToFloor, rep.HubCPUSecondsPer1000Workloads, rep.HubWritesPerWorkload, rep.FloorMillisPerWrite)
			fmt.Fprintf(w, "bytes the hub stored per workload\t%.0f (JSON, without managed fields:", rep.StoredBytesTotal)
			for _, kind := range slices.Sorted(maps.Keys(rep.StoredBytesPerWorkload)) {
				fmt.Fprintf(w, " %s %.0f", kind, rep.StoredBytesPerWorkload[kind])
			}
			fmt.Fprintf(w, ")\n")
			fmt.Fprintf(w, "binding updates per workload, by what they changed\t\n")
			for _, r := range rep.BindingWritesByPart {
				fmt.Fprintf(w, "  %s\t%.2f\n", r.Parts, r.PerWorkload)
			}
			fmt.Fprintf(w, "writes that changed nothing\t%d to bindings, %d to Works\n", rep.NoOpWrites["ResourceBinding"], rep.NoOpWrites["Work"])
			fmt.Fprintf(w, "memory at the end\tRSS %.0f MiB (peak %.0f MiB), Go heap %.0f MiB, %d goroutines\n",
				mib(rep.Memory.RSSBytes), mib(rep.Memory.PeakRSSBytes), mib(rep.Memory.HeapInuseBytes), rep.Memory.Goroutines)
			if c := rep.Capacity; c != nil {
				fmt.Fprintf(w, "finite capacity\troom for %d replicas (%.0f%% of all), node by node\n", c.RoomReplicas, 100*c.Fraction)
				fmt.Fprintf(w, "  workloads\t%d Scheduled, %d Unschedulable on the hub\n", c.ScheduledWorkloads, c.UnschedulableWorkloads)
				fmt.Fprintf(w, "  replicas placed\t%d (%d beyond a member's room)\n", c.PlacedReplicas, c.ReplicasBeyondRoom)
				fmt.Fprintf(w, "  pods in members\t%d running, %d Pending (settled %.1f s after the last Work applied)\n", c.RunningPods, c.PendingPods, c.SettleSeconds)
			}
			fmt.Fprintf(w, "reconciles\t(mean time each, mean wait in the queue before it)\n")
			for _, r := range rep.Reconciles {
				fmt.Fprintf(w, "  %s\t%d (%d errors), %.3f s each, %.3f s queued\n", r.Controller, r.Total, r.Errors, r.MeanSeconds, r.MeanQueueSeconds)
			}
			return w.Flush()
		},
	}
	f := cmd.Flags()
	f.IntVar(&o.Members, "members", 20, "member clusters")
	f.IntVar(&o.Deployments, "deployments", 1000, "Deployments to propagate")
	f.IntVar(&o.Policies, "policies", 10, "PropagationPolicies the Deployments are spread over")
	f.IntVar(&o.SimulatedPullClusters, "simulated-pull-clusters", 0, "Pull clusters registered with no member behind them, served by one in-process simulator of their agents")
	f.BoolVar(&o.MembersAPIOnly, "members-api-only", false, "members run their API server and nodes only (no controllers, scheduler or pods): the hub measured as if members had machines of their own")
	f.Float64Var(&o.Capacity, "capacity", 0, "members with finite room for about this share (0 to 1) of all replicas; 0 gives room for everything")
	f.DurationVar(&o.Timeout, "timeout", 10*time.Minute, "how long to wait for every binding to be Scheduled and every Work applied")
	f.StringVar(&o.DataDir, "data-dir", "", "empty directory for the fleet (default: a temporary one, removed afterwards)")
	f.StringVarP(&output, "output", "o", "text", "output format: text or json")
	f.IntVarP(&verbose, "verbose", "v", 0, "log verbosity")
	f.StringVar(&cpuProfile, "cpuprofile", "", "write a CPU profile of the measured part (creation until every Work is applied) to this file")
	return cmd
}

func mib(b uint64) float64 { return float64(b) / (1 << 20) }
