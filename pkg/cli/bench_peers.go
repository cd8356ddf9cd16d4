package cli

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/shepherd-io/shepherd/internal/bench/fleetbench"
)

// The scenarios of `shepherd bench peers`, and the flags only one of them
// reads.
const (
	scenarioKubeFleet      = "kubefleet"
	scenarioKarmadaStartup = "karmada-startup"
)

var peerOnlyFlags = map[string][]string{
	scenarioKubeFleet:      {"placements", "clusters-per-placement", "rollouts"},
	scenarioKarmadaStartup: {"workloads"},
}

// peersOptions are the flags of `shepherd bench peers`.
type peersOptions struct {
	scenario string
	clusters int
	kf       fleetbench.KubeFleetOptions
	ks       fleetbench.KarmadaStartupOptions
	quiet    time.Duration
	timeout  time.Duration
}

func newBenchPeersCommand() *cobra.Command {
	var (
		o       peersOptions
		output  string
		verbose int
	)
	cmd := &cobra.Command{
		Use:   "peers --scenario kubefleet|karmada-startup",
		Short: "Run KubeFleet's and Karmada's published scale scenarios on simulated Pull clusters",
		Long: `Start a hub with the controller manager and simulated Pull clusters (registered
as "shepherd register" does; one simulator writes what their agents would:
Leases, and every Work applied and Healthy), and run one of two peers'
published scale scenarios on it.

--scenario kubefleet (KubeFleet's performance and scalability report, Q1 2026):
--clusters clusters (default 1000), labelled in groups of
--clusters-per-placement (default 100) in order of their names; --placements
placements (default 1000), each a namespace holding a PropagationPolicy that
picks a group by label and names a 1 KB ConfigMap and a Deployment of 0
replicas. The namespace has no Work: a member creates it with the first
object. Reported: each placement's latency (from its first object created
until both its bindings are Scheduled and each of its Works is applied,
p50 and p90), Works and etcd bytes per placement-cluster pair, the hub's heap
and the process's RSS, etcd's size; then one placement's image change alone
and --rollouts (default 100) at once, each until its binding's rollout is
Complete; then a restart of the controller manager, until it caught up.

KubeFleet's rollouts have three stages (20, 30 and 50 % of a placement's
clusters), each updating at most half of its clusters at once, with no
approval or wait. Here the policy's Staged rollout has the same three stages
(a label each, waitSeconds 0, minSuccessSeconds 0), but maxConcurrency is one
number for all stages, counted on the placement's clusters: 20 %, KubeFleet's
limit averaged over the clusters (10 of 20, 15 of 30, 25 of 50), which takes
as many waves in all (1 + 2 + 3 where KubeFleet takes 2 + 2 + 2).

--scenario karmada-startup (Karmada v1.17's controller start-up): --workloads
Deployments (default 30000), each mounting a ConfigMap of its own, under one
policy with propagateDeps, on --clusters clusters (default 2). Once every Work
is applied, the controller manager is restarted and timed until caught up.

Caught up means: the binding controller has reconciled at least as many times
as the hub holds bindings, the work queues of the pipeline's controllers are
empty with nothing under way, and the hub has served no write of a binding,
a Work or a template, all of it for --quiet; the time runs from the new
manager's start to the last moment (read every half second) one of them did
not hold. The report lists the reconciles and the writes of the catch-up.

Everything runs in one process (the hub's API server and etcd, the
controllers and the simulator each hold the objects), and at the peers' sizes
neither scenario fits a small machine. Small runs on a 2-core machine peaked
at about 0.7 GB plus 0.75 MB per placement-cluster pair for kubefleet (some
75 GB at 1,000 x 100; 24 GB holds about a third of that, e.g.
--placements 300), and 0.8 GB plus 1 to 1.1 MB per workload for
karmada-startup on 2 clusters (some 35 GB at 30,000; 24 GB holds about
--workloads 20000). They placed 20 to 45 Works a second: hours at the peers'
sizes. Treat these as orders of magnitude.`,
		Example: `  # a small run of each
  shepherd bench peers --scenario kubefleet --clusters 20 --placements 20 --clusters-per-placement 5 --rollouts 5
  shepherd bench peers --scenario karmada-startup --workloads 200

  # KubeFleet's and Karmada's sizes (tens of GB of memory, hours)
  shepherd bench peers --scenario kubefleet -o json
  shepherd bench peers --scenario karmada-startup -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runBench(cmd, output, verbose, func() error { return o.settle(cmd.Flags()) }, func(log logr.Logger) error {
				return o.run(cmd, output, log)
			})
		},
	}
	f := cmd.Flags()
	o.addFlags(f)
	f.StringVarP(&output, "output", "o", "text", "output format: text or json")
	f.IntVarP(&verbose, "verbose", "v", 0, "log verbosity")
	_ = cmd.MarkFlagRequired("scenario")
	return cmd
}

// addFlags binds the scenario's flags to o.
func (o *peersOptions) addFlags(f *pflag.FlagSet) {
	f.StringVar(&o.scenario, "scenario", "", "kubefleet or karmada-startup")
	f.IntVar(&o.clusters, "clusters", 0, fmt.Sprintf("simulated Pull clusters (default %d for kubefleet, %d for karmada-startup)",
		fleetbench.DefaultKubeFleetClusters, fleetbench.DefaultKarmadaClusters))
	f.IntVar(&o.kf.Placements, "placements", fleetbench.DefaultKubeFleetPlacements, "kubefleet: placements")
	f.IntVar(&o.kf.ClustersPerPlacement, "clusters-per-placement", fleetbench.DefaultKubeFleetClustersPerPlacement, "kubefleet: clusters each placement picks")
	f.IntVar(&o.kf.Rollouts, "rollouts", fleetbench.DefaultKubeFleetRollouts, "kubefleet: placements whose image changes at once")
	f.IntVar(&o.ks.Workloads, "workloads", fleetbench.DefaultKarmadaWorkloads, "karmada-startup: Deployments, each with a ConfigMap it depends on")
	f.DurationVar(&o.quiet, "quiet", fleetbench.DefaultPeersQuiet, "how long a restarted controller manager must stay idle to count as caught up")
	f.DurationVar(&o.timeout, "timeout", fleetbench.DefaultPeersTimeout, "how long each wait may take: the placements, each rollout, the catch-up")
}

// settle checks the scenario and the flags given for it, and fills the
// scenario's options; the size itself is checked by their Validate.
func (o *peersOptions) settle(flags *pflag.FlagSet) error {
	others, ok := map[string]string{scenarioKubeFleet: scenarioKarmadaStartup, scenarioKarmadaStartup: scenarioKubeFleet}[o.scenario]
	if !ok {
		return fmt.Errorf("--scenario %q: use %s or %s", o.scenario, scenarioKubeFleet, scenarioKarmadaStartup)
	}
	var errs []error
	for _, name := range peerOnlyFlags[others] {
		if flags.Changed(name) {
			errs = append(errs, fmt.Errorf("--%s is for --scenario %s, not %s", name, others, o.scenario))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	o.kf.Clusters, o.ks.Clusters = fleetbench.DefaultKubeFleetClusters, fleetbench.DefaultKarmadaClusters
	if flags.Changed("clusters") {
		o.kf.Clusters, o.ks.Clusters = o.clusters, o.clusters
	}
	o.kf.Quiet, o.kf.Timeout = o.quiet, o.timeout
	o.ks.Quiet, o.ks.Timeout = o.quiet, o.timeout
	if o.scenario == scenarioKubeFleet {
		return o.kf.Validate()
	}
	return o.ks.Validate()
}

// run runs the scenario and prints its report.
func (o *peersOptions) run(cmd *cobra.Command, output string, log logr.Logger) error {
	var rep any
	var err error
	if o.scenario == scenarioKubeFleet {
		o.kf.Logger = log
		rep, err = fleetbench.RunKubeFleet(cmd.Context(), o.kf)
	} else {
		o.ks.Logger = log
		rep, err = fleetbench.RunKarmadaStartup(cmd.Context(), o.ks)
	}
	if err != nil {
		return err
	}
	if output == "json" {
		return printJSON(cmd.OutOrStdout(), rep)
	}
	switch r := rep.(type) {
	case *fleetbench.KubeFleetReport:
		return printKubeFleet(cmd.OutOrStdout(), r)
	case *fleetbench.KarmadaStartupReport:
		return printKarmadaStartup(cmd.OutOrStdout(), r)
	}
	return nil
}

// printKubeFleet writes the kubefleet report as text.
func printKubeFleet(out io.Writer, r *fleetbench.KubeFleetReport) error {
	fmt.Fprintf(out, "kubefleet: %d placements of %d clusters each, over %d simulated Pull clusters\n", r.Placements, r.ClustersPerPlacement, r.Clusters)
	fmt.Fprintf(out, "placed: all after %.1f s (created in %.1f s); per placement p50 %.1f s, p90 %.1f s, max %.1f s\n",
		r.PlacedSeconds, r.CreateSeconds, r.PlacementP50Seconds, r.PlacementP90Seconds, r.PlacementMaxSeconds)
	fmt.Fprintf(out, "per placement-cluster pair: %.2f Works, %s of etcd (%s in use)\n",
		r.WorksPerPair, bytesText(r.EtcdAllocatedBytesPerPair), bytesText(r.EtcdInUseBytesPerPair))
	printMemory(out, r.Footprint, r.PeakRSSBytes)
	fmt.Fprintf(out, "rollout alone: %.1f s; %d at once: all after %.1f s, each p50 %.1f s, p90 %.1f s, max %.1f s\n",
		r.RolloutAloneSeconds, r.Rollouts, r.ConcurrentAllSeconds, r.ConcurrentP50Seconds, r.ConcurrentP90Seconds, r.ConcurrentMaxSeconds)
	return printCatchUp(out, r.CatchUp)
}

// printKarmadaStartup writes the karmada-startup report as text.
func printKarmadaStartup(out io.Writer, r *fleetbench.KarmadaStartupReport) error {
	fmt.Fprintf(out, "karmada-startup: %d Deployments, each with a ConfigMap dependency, on %d simulated Pull clusters\n", r.Workloads, r.Clusters)
	fmt.Fprintf(out, "placed: %d Works applied after %.1f s (created in %.1f s)\n", r.Works, r.PlacedSeconds, r.CreateSeconds)
	printMemory(out, r.Footprint, r.PeakRSSBytes)
	return printCatchUp(out, r.CatchUp)
}

func printMemory(out io.Writer, fp fleetbench.Footprint, peak uint64) {
	fmt.Fprintf(out, "memory once placed: live heap %s (hub %s, controllers and simulator %s), RSS %s (peak at the end %s); etcd %s\n",
		bytesText(fp.Heap.LiveBytes), bytesText(fp.Heap.HubBytes), bytesText(fp.Heap.OtherBytes), bytesText(float64(fp.Memory.RSSBytes)), bytesText(float64(peak)),
		bytesText(float64(fp.EtcdAllocatedBytes)))
}

// printCatchUp writes the restart's catch-up: its time, then the writes
// and the reconciles it took.
func printCatchUp(out io.Writer, c *fleetbench.CatchUpReport) error {
	if c == nil {
		return nil
	}
	fmt.Fprintf(out, "controller manager restarted over %d bindings: stopped in %.1f s, caught up %.1f s after its start (then quiet for %.0f s)\n",
		c.Bindings, c.StopSeconds, c.CaughtUpSeconds, c.QuietSeconds)
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "CATCH-UP WRITES\tCOUNT")
	for _, q := range c.Writes {
		fmt.Fprintf(w, "%s %s\t%d\n", q.Verb, resourcePath(q.Resource, q.Subresource), q.Count)
	}
	fmt.Fprintln(w, "CATCH-UP RECONCILES\tCOUNT")
	for _, rc := range c.Reconciles {
		fmt.Fprintf(w, "%s\t%d\n", rc.Controller, rc.Total)
	}
	return w.Flush()
}

// bytesText is n in the largest binary unit that keeps it at least 1.
func bytesText(n float64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB"}
	i := 0
	for ; n >= 1024 && i < len(units)-1; i++ {
		n /= 1024
	}
	if i == 0 {
		return fmt.Sprintf("%.0f B", n)
	}
	return strings.TrimSuffix(fmt.Sprintf("%.1f", n), ".0") + " " + units[i]
}
