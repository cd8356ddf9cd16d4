package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/interpreter"
	"github.com/shepherd-io/shepherd/pkg/rollout"
	"github.com/shepherd-io/shepherd/pkg/scenario"
	"github.com/shepherd-io/shepherd/pkg/scheduler"
	"github.com/shepherd-io/shepherd/pkg/scheduler/framework"
	"github.com/shepherd-io/shepherd/pkg/scheduler/profile"
)

type planOptions struct {
	file     string
	output   string
	explain  bool
	workload string
	inOrder  bool
	waves    bool
	// schedulerConfig is the --scheduler-config file, if any.
	schedulerConfig string
}

func newPlanCommand() *cobra.Command {
	o := &planOptions{}
	cmd := &cobra.Command{
		Use:   "plan -f FILE",
		Short: "Show where the scheduler would place each workload of a scenario, without a hub",
		Long: `Schedule every workload of a scenario file against its fleet, offline, and
print each placement: the target clusters and their replicas, or why the
workload cannot be placed. With --explain, every cluster's fate follows:
which filter rejected it and why, or its scores and whether it was selected.

The file is either a fleet scenario (the JSON format of the bench fleets, or
a YAML document of kind Scenario with the same fields), or Shepherd objects
in multi-document YAML: Clusters (with status.resourceSummary and
status.apiEnablements), PropagationPolicies, ClusterPropagationPolicies, the
resource templates they select, and ResourceBindings.

Every workload is placed against the fleet as given: earlier placements do
not use up room. With --in-order, the workloads are placed one after another,
in the order they are listed, each on the room the earlier ones left: a
placed workload's new replicas are taken from each target cluster's free
sums and from its nodes (one replica at a time on the node with the most
room for it, as kube-scheduler spreads pods), so later workloads may no
longer fit. With --workload, the workloads before it are placed too, and
only it is shown.

With --waves, each placed workload's rollout follows: the waves a change of
it would go out in under its policy's spec.rollout (stages picked by the
scenario's cluster labels), as "shepherd rollout plan" shows them for a
workload on a hub.`,
		Example: `  # placements of a fleet scenario, as a table
  shepherd plan -f fleet-20c-200w.json

  # one workload, with every cluster's explanation
  shepherd plan -f fleet.yaml --workload team-01/app-000002 --explain

  # machine-readable
  shepherd plan -f fleet.yaml -o json

  # which workloads still fit once the ones before them took their room
  shepherd plan -f fleet.yaml --in-order

  # the waves a change of each workload would go out in
  shepherd plan -f fleet.yaml --waves`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return o.run(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	cmd.Flags().StringVarP(&o.file, "filename", "f", "", "scenario file (JSON fleet scenario or multi-document YAML)")
	cmd.Flags().StringVarP(&o.output, "output", "o", "table", "output format: table, json or yaml")
	cmd.Flags().BoolVar(&o.explain, "explain", false, "explain every cluster's fate for each workload")
	cmd.Flags().StringVar(&o.workload, "workload", "", "only this workload (NAMESPACE/NAME, or NAME)")
	cmd.Flags().BoolVar(&o.waves, "waves", false, "show the waves a change of each placed workload would go out in (its policy's spec.rollout)")
	cmd.Flags().StringVar(&o.schedulerConfig, "scheduler-config", "", "SchedulerConfiguration file, as the controller manager's --scheduler-config: plan with its profile (default: the built-in one)")
	cmd.Flags().BoolVar(&o.inOrder, "in-order", false, "place the workloads one after another, each on the room the earlier ones left (default: each on the fleet as given)")
	_ = cmd.MarkFlagRequired("filename")
	return cmd
}

// planReport is the JSON and YAML output of plan.
type planReport struct {
	Scenario string `json:"scenario,omitempty"`
	Clusters int    `json:"clusters"`
	// InOrder: each workload was placed on the room the earlier ones left.
	InOrder   bool           `json:"inOrder,omitempty"`
	Workloads []workloadPlan `json:"workloads"`
	// Unmatched are templates no policy selects (not scheduled).
	Unmatched []string `json:"unmatched,omitempty"`
}

type workloadPlan struct {
	Namespace    string       `json:"namespace"`
	Name         string       `json:"name"`
	Kind         string       `json:"kind"`
	Replicas     int32        `json:"replicas"`
	Scheduled    bool         `json:"scheduled"`
	AffinityName string       `json:"affinityName,omitempty"`
	Targets      []planTarget `json:"targets"`
	// HeadCluster is the cluster of the head of a workload whose
	// components are divided; NotDivided why a workload whose placement
	// asks for it is placed whole.
	HeadCluster string `json:"headCluster,omitempty"`
	NotDivided  string `json:"notDivided,omitempty"`
	// Reason is empty when scheduled, the aggregated message otherwise.
	Reason       string                  `json:"reason"`
	Explanations []scheduler.Explanation `json:"explanations,omitempty"`
	// Rollout and Waves (with --waves): the policy's rollout strategy
	// type and the waves a change would go out in.
	Rollout  policyv1alpha1.RolloutType `json:"rollout,omitempty"`
	Waves    []rollout.Wave             `json:"waves,omitempty"`
	strategy *policyv1alpha1.RolloutStrategy
}

type planTarget struct {
	Cluster  string `json:"cluster"`
	Replicas int32  `json:"replicas"`
	// Components are a gang's components on the cluster, with their
	// replicas there.
	Components []workv1alpha1.TargetComponent `json:"components,omitempty"`
}

func (o *planOptions) run(ctx context.Context, out, errOut io.Writer) error {
	switch o.output {
	case "table", "json", "yaml":
	default:
		return fmt.Errorf("--output %q is not supported: use table, json or yaml", o.output)
	}
	sched, err := newScheduler(o.schedulerConfig)
	if err != nil {
		return err
	}
	// Offline: the scenario file is all there is, no hub whose
	// customizations could teach other kinds.
	s, err := scenario.Load(o.file, time.Now(), interpreter.Builtin())
	if err != nil {
		return err
	}
	for _, u := range s.Unmatched {
		fmt.Fprintf(errOut, "warning: no policy selects %s; it is not scheduled\n", u)
	}
	report := planReport{Scenario: s.Name, Clusters: s.Snapshot.Len(), InOrder: o.inOrder, Workloads: []workloadPlan{}, Unmatched: s.Unmatched}
	var room *scenario.Room
	if o.inOrder {
		room = s.Room()
	}
	// Workload affinity places a workload by where the earlier ones of its
	// groups went, so with groups every workload is placed, in order, and
	// each one's peers are the others as placed so far.
	grouped := s.HasWorkloadAffinity()
	placed := map[*framework.Workload][]string{}
	for _, w := range s.Workloads {
		selected := o.selects(w)
		if !selected && room == nil && !grouped {
			continue
		}
		snap := s.Snapshot
		if room != nil {
			snap = room.Snapshot()
		}
		p, targets, err := planWorkload(ctx, sched, snap, s.WithPeers(w, placed), o.explain && selected)
		if err != nil {
			return err
		}
		if grouped && len(targets) > 0 {
			placed[w] = targetNames(targets)
		}
		if selected && o.waves && p.Scheduled {
			if err := p.planWaves(s, w); err != nil {
				return err
			}
		}
		if selected {
			report.Workloads = append(report.Workloads, p)
		}
		if room != nil {
			if err := room.Take(w, targets); err != nil {
				return err
			}
		}
	}
	if o.workload != "" && len(report.Workloads) == 0 {
		return fmt.Errorf("--workload %q: no such workload in %s", o.workload, o.file)
	}
	switch o.output {
	case "json":
		return printJSON(out, report)
	case "yaml":
		b, err := yaml.Marshal(report)
		if err != nil {
			return err
		}
		_, err = out.Write(b)
		return err
	}
	if err := printPlanTable(out, report, o.explain); err != nil {
		return err
	}
	if !o.waves {
		return nil
	}
	for _, w := range report.Workloads {
		if !w.Scheduled {
			continue
		}
		fmt.Fprintf(out, "\n%s/%s rollout:\n", w.Namespace, w.Name)
		if err := printWaves(out, w.strategy, w.Waves); err != nil {
			return err
		}
	}
	return nil
}

// targetNames are the clusters of targets, sorted.
func targetNames(targets []workv1alpha1.TargetCluster) []string {
	out := make([]string, 0, len(targets))
	for _, t := range targets {
		out = append(out, t.Name)
	}
	slices.Sort(out)
	return out
}

// planWaves sets the waves a change of w would go out in, over its
// targets, under the rollout strategy its policy gives it.
func (p *workloadPlan) planWaves(s *scenario.Scenario, w *framework.Workload) error {
	strategy := s.Rollout(w)
	selectors, err := rollout.Selectors(strategy)
	if err != nil {
		return fmt.Errorf("%s/%s: %w", w.Namespace, w.Name, err)
	}
	clusters := make([]rollout.Cluster, 0, len(p.Targets))
	for _, t := range p.Targets {
		clusters = append(clusters, rollout.Cluster{Name: t.Cluster, Stages: selectors.Of(s.ClusterLabels(t.Cluster))})
	}
	p.strategy, p.Rollout = strategy, policyv1alpha1.RolloutAll
	if strategy != nil && strategy.Type != "" {
		p.Rollout = strategy.Type
	}
	p.Waves = rollout.Waves(strategy, clusters)
	return nil
}

func (o *planOptions) selects(w *framework.Workload) bool {
	if o.workload == "" {
		return true
	}
	ns, name, ok := strings.Cut(o.workload, "/")
	if !ok {
		return w.Name == o.workload
	}
	return w.Namespace == ns && w.Name == name
}

// newScheduler builds the scheduler of the --scheduler-config file, or the
// default one without a file, checking the file before any work is done.
func newScheduler(configFile string) (*scheduler.Scheduler, error) {
	p, err := schedulerProfile(configFile)
	switch {
	case err != nil:
		return nil, err
	case p == nil:
		return scheduler.NewDefault(), nil
	}
	return scheduler.New(*p, nil)
}

// schedulerProfile reads and checks a --scheduler-config file (nil
// without one), for the commands that run a scheduler.
func schedulerProfile(configFile string) (*framework.Profile, error) {
	if configFile == "" {
		return nil, nil
	}
	p, err := profile.LoadFile(configFile, nil)
	if err != nil {
		return nil, fmt.Errorf("--scheduler-config %w", err)
	}
	return &p, nil
}

// planWorkload schedules w and also returns its targets (none when it is
// unschedulable).
func planWorkload(ctx context.Context, sched *scheduler.Scheduler, snap *framework.Snapshot, w *framework.Workload, explain bool) (workloadPlan, []workv1alpha1.TargetCluster, error) {
	p := workloadPlan{Namespace: w.Namespace, Name: w.Name, Kind: w.Kind, Replicas: w.Replicas, Targets: []planTarget{}}
	res, err := sched.Schedule(ctx, snap, w)
	var ue *scheduler.UnschedulableError
	switch {
	case errors.As(err, &ue):
		p.Reason = ue.Error()
	case err != nil:
		return p, nil, err
	default:
		p.Scheduled, p.AffinityName, p.NotDivided = true, res.AffinityName, res.NotDivided
		if res.Division != nil {
			p.HeadCluster = res.Division.HeadCluster
		}
		for _, t := range res.Targets {
			p.Targets = append(p.Targets, planTarget{Cluster: t.Name, Replicas: t.Replicas, Components: t.Components})
		}
	}
	if explain {
		p.Explanations = res.Explanations()
	}
	res.Release()
	if !p.Scheduled {
		return p, nil, nil
	}
	return p, res.Targets, nil
}

// maxTableTargets caps the targets listed per row of the table (a placement
// on every cluster of a large fleet would fill the screen); -o json has all.
const maxTableTargets = 6

func printPlanTable(out io.Writer, r planReport, explain bool) error {
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAMESPACE\tNAME\tKIND\tREPLICAS\tSCHEDULED\tTARGETS\tREASON")
	for _, w := range r.Workloads {
		var targets []string
		for i, t := range w.Targets {
			if i == maxTableTargets {
				targets = append(targets, fmt.Sprintf("(+%d more)", len(w.Targets)-i))
				break
			}
			targets = append(targets, targetCell(t, w.HeadCluster))
		}
		reason := w.Reason
		if w.NotDivided != "" {
			reason = "placed whole, not divided: " + w.NotDivided
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%t\t%s\t%s\n", w.Namespace, w.Name, w.Kind, w.Replicas, w.Scheduled,
			dash(strings.Join(targets, ",")), dash(reason))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if !explain {
		return nil
	}
	for _, w := range r.Workloads {
		fmt.Fprintf(out, "\n%s/%s", w.Namespace, w.Name)
		if w.AffinityName != "" {
			fmt.Fprintf(out, " (affinity term %q)", w.AffinityName)
		}
		fmt.Fprintln(out, ":")
		tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "  CLUSTER\tSELECTED\tREPLICAS\tROOM\tSCORES\tTOTAL\tFILTERED BY\tREASON")
		for _, e := range w.Explanations {
			scores := make([]string, len(e.Scores))
			for i, s := range e.Scores {
				scores[i] = fmt.Sprintf("%s=%d", s.Plugin, s.Score)
			}
			fmt.Fprintf(tw, "  %s\t%t\t%d\t%s\t%s\t%d\t%s\t%s\n", e.Cluster, e.Selected, e.Replicas, roomCell(e.Room),
				dash(strings.Join(scores, ",")), e.Total, dash(e.FilteredBy), e.Reason)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		printNodeModels(out, w.Explanations)
	}
	return nil
}

// targetCell is a target of the table: "member1:3", or for a gang its
// components there, the head cluster marked: "member1(head):head=1+workers=2".
func targetCell(t planTarget, head string) string {
	if len(t.Components) == 0 {
		return fmt.Sprintf("%s:%d", t.Cluster, t.Replicas)
	}
	name := t.Cluster
	if head != "" && t.Cluster == head {
		name += "(head)"
	}
	cs := make([]string, len(t.Components))
	for i, c := range t.Components {
		cs[i] = fmt.Sprintf("%s=%d", c.Name, c.Replicas)
	}
	return name + ":" + strings.Join(cs, "+")
}

// roomCell is how many replicas fit on a cluster and, when it is not the
// CPU or memory sums, what limits them ("node room": no single node has
// the room, whatever the sums say).
func roomCell(r *scheduler.ClusterRoom) string {
	switch {
	case r == nil:
		return "-"
	case r.Limiting == "":
		return fmt.Sprint(r.Fit)
	default:
		return fmt.Sprintf("%d (%s)", r.Fit, r.Limiting)
	}
}

// printNodeModels lists the node model of each cluster that reports one:
// the free room node by node that ROOM was counted from.
func printNodeModels(out io.Writer, es []scheduler.Explanation) {
	header := false
	for _, e := range es {
		if e.Room == nil || e.Room.Nodes == "" {
			continue
		}
		if !header {
			fmt.Fprintln(out, "  node model (free room, node by node; replicas in flight deducted):")
			header = true
		}
		fmt.Fprintf(out, "    %s: %s\n", e.Cluster, e.Room.Nodes)
	}
}
