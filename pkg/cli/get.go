package cli

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/util/duration"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
)

type getOptions struct {
	hub           hubFlags
	namespace     string
	allNamespaces bool
	cluster       string
}

func newGetCommand() *cobra.Command {
	o := &getOptions{}
	cmd := &cobra.Command{
		Use:   "get clusters|bindings|placements|services|autoscalers|rendered TYPE/NAME",
		Short: "Show the fleet's clusters, bindings and placements, and what each cluster is sent",
		Long: `Show what the hub knows, in tables a person can read:

  clusters     member clusters: readiness, version, topology, taints, nodes
  bindings     one row per binding: kind, replicas, Scheduled, FullyApplied
  placements   one row per workload: cluster -> replicas (health) for each target,
               and [N unschedulable] for replicas Pending unschedulable there,
               [drifted] where the copy was edited in the member, [unclaimed]
               on a workload whose policy was deleted; a workload whose
               components are divided shows cluster{component=replicas,...}
               and [head] on the cluster running the parts not divided
  services     multi-cluster Services: each exported Service, its import type,
               the clusters serving it with their endpoint counts ([not ready]
               where the hub left a cluster's endpoints out), and the conflict
               between its exports, if any
  autoscalers  FederatedHPAs and CronFederatedHPAs: the target, the bounds,
               current/desired replicas, each member cluster's utilization
               (or why it was left out), each cron rule's next run and last
               outcome
  rendered     TYPE/NAME: the manifest each cluster is sent (its share of the
               replicas, its override policies), with the override rules applied

kubectl works for all of these too (kubectl get clusters,rb,crb,expsvc,fhpa,cronfhpa -A).`,
		Example: `  shepherd get clusters
  shepherd get placements -A
  shepherd get bindings -n default
  shepherd get services -A
  shepherd get autoscalers -A
  shepherd get rendered deployment/shop -n default --cluster member2`,
		Args:      cobra.RangeArgs(1, 2),
		ValidArgs: []string{"clusters", "bindings", "placements", "services", "autoscalers", "rendered"},
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.validate(args); err != nil {
				return err
			}
			c, err := o.hub.client()
			if err != nil {
				return err
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), 30*time.Second)
			defer cancel()
			if args[0] == "rendered" {
				return o.printRendered(ctx, c, cmd.OutOrStdout(), args[1], o.cluster)
			}
			w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			defer w.Flush()
			switch args[0] {
			case "clusters", "cluster":
				return printClusters(ctx, c, w)
			case "bindings", "binding":
				return o.printBindings(ctx, c, w, false)
			case "placements", "placement":
				return o.printBindings(ctx, c, w, true)
			case "services", "service":
				ns := o.namespace
				if o.allNamespaces {
					ns = ""
				}
				return printServices(ctx, c, w, ns)
			case "autoscalers", "autoscaler":
				ns := o.namespace
				if o.allNamespaces {
					ns = ""
				}
				return printAutoscalers(ctx, c, w, ns)
			default:
				return fmt.Errorf("unknown resource %q: use clusters, bindings, placements, services or autoscalers", args[0])
			}
		},
	}
	o.hub.AddTo(cmd)
	cmd.Flags().StringVarP(&o.namespace, "namespace", "n", "default", "namespace of the bindings (services: of the Services)")
	cmd.Flags().BoolVarP(&o.allNamespaces, "all-namespaces", "A", false, "bindings of every namespace, and cluster-scoped ones")
	cmd.Flags().StringVar(&o.cluster, "cluster", "", "rendered: only this cluster's manifest")
	return cmd
}

// validate checks the arguments and flags before the hub is contacted.
func (o *getOptions) validate(args []string) error {
	switch {
	case args[0] == "rendered" && len(args) != 2:
		return fmt.Errorf("rendered needs TYPE/NAME, e.g. shepherd get rendered deployment/web")
	case args[0] == "rendered" && o.allNamespaces:
		return fmt.Errorf("rendered shows one workload: use --namespace, not --all-namespaces")
	case args[0] != "rendered" && len(args) > 1:
		return fmt.Errorf("%s takes no name", args[0])
	case args[0] != "rendered" && o.cluster != "":
		return fmt.Errorf("--cluster applies to rendered only")
	}
	return nil
}

func age(t time.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(time.Since(t))
}

func printClusters(ctx context.Context, c client.Client, w io.Writer) error {
	var list clusterv1alpha1.ClusterList
	if err := c.List(ctx, &list); err != nil {
		return fmt.Errorf("listing clusters: %w", err)
	}
	fmt.Fprintln(w, "NAME\tMODE\tREADY\tVERSION\tPROVIDER\tREGION\tZONE\tNODES\tTAINTS\tAGE")
	for _, cl := range list.Items {
		ready := "Unknown"
		if cond := meta.FindStatusCondition(cl.Status.Conditions, clusterv1alpha1.ClusterConditionReady); cond != nil {
			ready = string(cond.Status)
		}
		nodes := "-"
		if s := cl.Status.NodeSummary; s != nil {
			nodes = fmt.Sprintf("%d/%d", s.ReadyNum, s.TotalNum)
		}
		taints := make([]string, 0, len(cl.Spec.Taints))
		for _, t := range cl.Spec.Taints {
			taints = append(taints, t.ToString())
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", cl.Name, dash(string(cl.Spec.SyncMode)), ready, dash(cl.Status.KubernetesVersion),
			dash(cl.Spec.Provider), dash(cl.Spec.Region), dash(cl.Spec.Zone), nodes, dash(strings.Join(taints, ",")), age(cl.CreationTimestamp.Time))
	}
	return nil
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// listBindings returns the bindings in scope, namespaced ones first, each
// group sorted by namespace and name.
func (o *getOptions) listBindings(ctx context.Context, c client.Client) ([]workv1alpha1.BindingObject, error) {
	var rbs workv1alpha1.ResourceBindingList
	opts := []client.ListOption{}
	if !o.allNamespaces {
		opts = append(opts, client.InNamespace(o.namespace))
	}
	if err := c.List(ctx, &rbs, opts...); err != nil {
		return nil, fmt.Errorf("listing resourcebindings: %w", err)
	}
	out := make([]workv1alpha1.BindingObject, 0, len(rbs.Items))
	for i := range rbs.Items {
		out = append(out, &rbs.Items[i])
	}
	if o.allNamespaces {
		var crbs workv1alpha1.ClusterResourceBindingList
		if err := c.List(ctx, &crbs); err != nil {
			return nil, fmt.Errorf("listing clusterresourcebindings: %w", err)
		}
		for i := range crbs.Items {
			out = append(out, &crbs.Items[i])
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		ni, nj := out[i].GetNamespace(), out[j].GetNamespace()
		if (ni == "") != (nj == "") {
			return nj == "" // namespaced bindings before cluster-scoped ones
		}
		if ni != nj {
			return ni < nj
		}
		return out[i].GetName() < out[j].GetName()
	})
	return out, nil
}

func (o *getOptions) printBindings(ctx context.Context, c client.Client, w io.Writer, placements bool) error {
	bindings, err := o.listBindings(ctx, c)
	if err != nil {
		return err
	}
	if placements {
		fmt.Fprintln(w, "NAMESPACE\tWORKLOAD\tREPLICAS\tPLACEMENT")
	} else {
		fmt.Fprintln(w, "NAMESPACE\tNAME\tKIND\tREPLICAS\tSCHEDULED\tFULLYAPPLIED\tAGE")
	}
	for _, b := range bindings {
		spec, status := b.GetBindingSpec(), b.GetBindingStatus()
		if placements {
			fmt.Fprintf(w, "%s\t%s/%s\t%d\t%s\n", dash(b.GetNamespace()), strings.ToLower(spec.Resource.Kind), spec.Resource.Name,
				spec.Replicas, placementSummary(spec, status))
			continue
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%d\t%s\t%s\t%s\n", dash(b.GetNamespace()), b.GetName(), spec.Resource.Kind, spec.Replicas,
			conditionStatus(status, workv1alpha1.ConditionScheduled), conditionStatus(status, workv1alpha1.ConditionFullyApplied),
			age(b.GetCreationTimestamp().Time))
	}
	return nil
}

// unschedulableNote is "3 unschedulable", with the components they
// belong to when the cluster reports them: "3 unschedulable: ray-head 1,
// workers 2".
func unschedulableNote(it *workv1alpha1.AggregatedStatusItem) string {
	out := fmt.Sprintf("%d unschedulable", it.UnschedulableReplicas)
	if len(it.UnschedulableComponents) == 0 {
		return out
	}
	parts := make([]string, len(it.UnschedulableComponents))
	for i, c := range it.UnschedulableComponents {
		parts[i] = fmt.Sprintf("%s %d", c.Name, c.Replicas)
	}
	return out + ": " + strings.Join(parts, ", ")
}

func conditionStatus(status *workv1alpha1.BindingStatus, condType string) string {
	cond := meta.FindStatusCondition(status.Conditions, condType)
	if cond == nil {
		return "-"
	}
	if cond.Status == "True" {
		return "True"
	}
	return fmt.Sprintf("%s (%s)", cond.Status, cond.Reason)
}

// componentShares is a target's components: "coordinator=1,workers=3".
func componentShares(cs []workv1alpha1.TargetComponent) string {
	parts := make([]string, len(cs))
	for i, c := range cs {
		parts[i] = fmt.Sprintf("%s=%d", c.Name, c.Replicas)
	}
	return strings.Join(parts, ",")
}

// placementSummary renders "member1=3 (Healthy), member2=2 (Unknown)"
// (with "[1 unschedulable]" for replicas Pending unschedulable there, and
// which components they belong to for a gang whose pods are told apart,
// "[3 unschedulable: ray-head 1, workers 2]",
// "[drifted]" where the copy was edited in the member, and "[unclaimed]"
// when no policy governs the workload any longer), or the unschedulable
// reason when there are no targets. Kinds without replicas show no count:
// "member1 (Applied), member2 (Conflict)". A workload whose components
// were divided shows each cluster's components and marks the head's:
// "member1{head=1,workers=3} (Applied) [head], member2{workers=5} (Applied)". The word in parentheses is the
// copy's state (AggregatedStatusItem.State).
func placementSummary(spec *workv1alpha1.BindingSpec, status *workv1alpha1.BindingStatus) string {
	if len(spec.Clusters) == 0 {
		if cond := meta.FindStatusCondition(status.Conditions, workv1alpha1.ConditionScheduled); cond != nil && cond.Status != "True" {
			return "unschedulable: " + cond.Message
		}
		return "<pending>"
	}
	state := map[string]string{}
	pending := map[string]*workv1alpha1.AggregatedStatusItem{}
	drifted := map[string]bool{}
	for i := range status.AggregatedStatus {
		s := &status.AggregatedStatus[i]
		state[s.ClusterName] = s.State()
		pending[s.ClusterName] = s
		drifted[s.ClusterName] = s.Drifted
	}
	parts := make([]string, 0, len(spec.Clusters))
	for _, t := range spec.Clusters {
		p := t.Name
		switch {
		case spec.DividedComponents != nil:
			p += "{" + componentShares(t.Components) + "}"
		case spec.Replicas > 0 || t.Replicas > 0:
			p = fmt.Sprintf("%s=%d", t.Name, t.Replicas)
		}
		if h := state[t.Name]; h != "" {
			p += " (" + h + ")"
		}
		if it := pending[t.Name]; it != nil && it.UnschedulableReplicas > 0 {
			p += " [" + unschedulableNote(it) + "]"
		}
		if drifted[t.Name] {
			p += " [drifted]"
		}
		if spec.Suspension.Suspends(t.Name) {
			p += " [suspended]"
		}
		if d := spec.DividedComponents; d != nil && d.HeadCluster == t.Name && t.State != workv1alpha1.TargetUnscheduled {
			p += " [head]"
		}
		if t.State == workv1alpha1.TargetUnscheduled {
			p += " [leaving]"
		}
		parts = append(parts, p)
	}
	out := strings.Join(parts, ", ")
	if workv1alpha1.Unclaimed(status) {
		out += " [unclaimed]"
	}
	return out
}
