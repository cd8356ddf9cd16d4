package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/actions"
	"github.com/shepherd-io/shepherd/pkg/interpreter"
	"github.com/shepherd-io/shepherd/pkg/names"
	"github.com/shepherd-io/shepherd/pkg/rollout"
)

// rolloutFieldOwner is the field manager of the CLI's rollout changes.
const rolloutFieldOwner = "shepherd-cli"

type rolloutOptions struct {
	hub       hubFlags
	namespace string
	output    string
	stage     string
}

// newRolloutCommand groups the commands that operate a workload's rollout.
func newRolloutCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "rollout",
		Short: "Watch and steer a workload's Progressive or Staged rollout",
		Long: `A policy's spec.rollout sends a change of a workload to its clusters one
wave at a time (see docs/rollout.md). These commands act on the workload's
binding with your hub kubeconfig's identity: the hub's RBAC decides
(patch on resourcebindings or clusterresourcebindings).

TYPE/NAME names the template, as kubectl does: deployment/web, sts/db,
or Kind.version.group/NAME for other kinds.`,
	}
	cmd.AddCommand(
		rolloutSubcommand("status", "Show the revision going out, the stages and each cluster's revision and health",
			"  shepherd rollout status deployment/web -n shop", (*rolloutOptions).status),
		rolloutSubcommand("plan", "Show the waves a change of the workload would go out in, from its clusters and strategy",
			"  shepherd rollout plan deployment/web -n shop", (*rolloutOptions).plan),
		rolloutSubcommand("pause", "Hold the rollout: no cluster is sent the new revision until resumed",
			"  shepherd rollout pause deployment/web -n shop", (*rolloutOptions).pause),
		rolloutSubcommand("resume", "Let a paused rollout go on",
			"  shepherd rollout resume deployment/web -n shop", (*rolloutOptions).resume),
		rolloutSubcommand("approve", "Approve the stage that waits for an approval (or --stage)",
			"  shepherd rollout approve deployment/web -n shop\n  shepherd rollout approve deployment/web -n shop --stage canary", (*rolloutOptions).approve),
		rolloutSubcommand("undo", "Abandon the revision going out: the clusters it reached get the last good revision back",
			"  shepherd rollout undo deployment/web -n shop", (*rolloutOptions).undo),
	)
	return cmd
}

func rolloutSubcommand(use, short, example string, run func(*rolloutOptions, context.Context, client.Client, io.Writer, actions.BindingKey) error) *cobra.Command {
	o := &rolloutOptions{}
	cmd := &cobra.Command{
		Use:     use + " TYPE/NAME",
		Short:   short,
		Example: example,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := o.hub.client()
			if err != nil {
				return err
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), 30*time.Second)
			defer cancel()
			key, err := o.bindingKey(ctx, c, args[0])
			if err != nil {
				return err
			}
			return run(o, ctx, c, cmd.OutOrStdout(), key)
		},
	}
	o.hub.AddTo(cmd)
	o.hub.AddKubeconfigAlias(cmd)
	cmd.Flags().StringVarP(&o.namespace, "namespace", "n", "default", "namespace of the template (ignored for cluster-scoped kinds)")
	if use == "status" {
		cmd.Flags().StringVarP(&o.output, "output", "o", "", "json: the binding's status.rollout as JSON")
	}
	if use == "approve" {
		cmd.Flags().StringVar(&o.stage, "stage", "", "the stage to approve (default: the one waiting)")
	}
	return cmd
}

// bindingKey finds the binding of the template TYPE/NAME: the
// ResourceBinding in --namespace, else the ClusterResourceBinding.
func (o *rolloutOptions) bindingKey(ctx context.Context, c client.Client, arg string) (actions.BindingKey, error) {
	typ, name, ok := strings.Cut(arg, "/")
	if !ok || typ == "" || name == "" {
		return actions.BindingKey{}, fmt.Errorf("%q: want TYPE/NAME, e.g. deployment/web", arg)
	}
	_, kind, ok := interpreter.KindByName(typ)
	if !ok {
		kind, _, _ = strings.Cut(typ, ".")
	}
	_, key, err := actions.FindBinding(ctx, c, o.namespace, names.BindingName(kind, name))
	if err != nil {
		return key, fmt.Errorf("the binding of %s in namespace %s: %w (is it propagated? shepherd get placements)", arg, o.namespace, err)
	}
	return key, nil
}

func (o *rolloutOptions) status(ctx context.Context, c client.Client, w io.Writer, key actions.BindingKey) error {
	b, err := actions.GetBinding(ctx, c, key)
	if err != nil {
		return err
	}
	if o.output == "json" {
		return printJSON(w, b.GetBindingStatus().Rollout)
	}
	return printRolloutStatus(w, b)
}

// printRolloutStatus prints the rollout of b for people: the revision,
// the phase and why, the stages and each cluster.
func printRolloutStatus(w io.Writer, b workv1alpha1.BindingObject) error {
	spec, st := b.GetBindingSpec(), b.GetBindingStatus().Rollout
	if !spec.Rollout.Gated() {
		fmt.Fprintf(w, "%s: rollout All (every cluster is sent a change at once)\n", b.GetName())
		return nil
	}
	if st == nil {
		fmt.Fprintf(w, "%s: rollout %s, no revision yet\n", b.GetName(), spec.Rollout.Type)
		return nil
	}
	fmt.Fprintf(w, "Binding:    %s\nStrategy:   %s\nRevision:   %s\nLast good:  %s\nPhase:      %s\n", b.GetName(), spec.Rollout.Type, st.Revision, orDash(st.LastGoodRevision), st.Phase)
	if st.Message != "" {
		fmt.Fprintf(w, "Message:    %s\n", st.Message)
	}
	if spec.RolloutControl != nil && spec.RolloutControl.Paused {
		fmt.Fprintln(w, "Paused:     yes (shepherd rollout resume)")
	}
	if len(st.Stages) > 0 {
		fmt.Fprintln(w, "Stages:")
		for _, s := range st.Stages {
			state := "pending"
			switch {
			case s.CompletedAt != nil:
				state = "done " + s.CompletedAt.UTC().Format(time.RFC3339)
			case s.StartedAt != nil:
				state = "started " + s.StartedAt.UTC().Format(time.RFC3339)
			}
			fmt.Fprintf(w, "  %-20s %s\n", s.Name, state)
		}
	}
	health := map[string]string{}
	for _, a := range b.GetBindingStatus().AggregatedStatus {
		health[a.ClusterName] = string(a.Health)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CLUSTER\tSTAGE\tREVISION\tHEALTH\tUPDATED\tHEALTHY SINCE\t")
	for _, c := range st.Clusters {
		rev := orDash(c.Revision)
		if c.Revision == st.Revision {
			rev += " (new)"
		}
		if c.Failed {
			rev += " FAILED"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t\n", c.Name, orDash(c.Stage), rev, orDash(health[c.Name]), timeOrDash(c.UpdatedAt), timeOrDash(c.HealthySince))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, t := range []string{workv1alpha1.ConditionRolloutProgressing, workv1alpha1.ConditionRolloutPaused, workv1alpha1.ConditionRolloutFailed, workv1alpha1.ConditionRolloutComplete} {
		if c := meta.FindStatusCondition(b.GetBindingStatus().Conditions, t); c != nil && c.Status == "True" {
			fmt.Fprintf(w, "Condition:  %s (%s)\n", c.Type, c.Reason)
		}
	}
	return nil
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func timeOrDash(t *metav1.Time) string {
	if t == nil {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}

func (o *rolloutOptions) pause(ctx context.Context, c client.Client, w io.Writer, key actions.BindingKey) error {
	if err := actions.PauseRollout(ctx, c, key, true, rolloutFieldOwner); err != nil {
		return err
	}
	fmt.Fprintf(w, "paused the rollout of %s\n", key.Name)
	return nil
}

func (o *rolloutOptions) resume(ctx context.Context, c client.Client, w io.Writer, key actions.BindingKey) error {
	if err := actions.PauseRollout(ctx, c, key, false, rolloutFieldOwner); err != nil {
		return err
	}
	fmt.Fprintf(w, "resumed the rollout of %s\n", key.Name)
	return nil
}

func (o *rolloutOptions) approve(ctx context.Context, c client.Client, w io.Writer, key actions.BindingKey) error {
	stage, when, err := actions.ApproveRollout(ctx, c, key, o.stage, rolloutFieldOwner)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "approved stage %s (%s) of the rollout of %s\n", stage, when, key.Name)
	return nil
}

func (o *rolloutOptions) undo(ctx context.Context, c client.Client, w io.Writer, key actions.BindingKey) error {
	rev, err := actions.UndoRollout(ctx, c, key, rolloutFieldOwner)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "undid revision %s of %s: its clusters go back to the last good revision\n", rev, key.Name)
	return nil
}

func (o *rolloutOptions) plan(ctx context.Context, c client.Client, w io.Writer, key actions.BindingKey) error {
	b, err := actions.GetBinding(ctx, c, key)
	if err != nil {
		return err
	}
	spec := b.GetBindingSpec()
	selectors, err := rollout.Selectors(spec.Rollout)
	if err != nil {
		return err
	}
	var clusters []rollout.Cluster
	for _, t := range spec.Clusters {
		if t.State == workv1alpha1.TargetUnscheduled {
			continue
		}
		rc := rollout.Cluster{Name: t.Name}
		if selectors != nil {
			cl := &clusterv1alpha1.Cluster{}
			if err := c.Get(ctx, client.ObjectKey{Name: t.Name}, cl); client.IgnoreNotFound(err) != nil {
				return err
			}
			rc.Stages = selectors.Of(cl.Labels)
		}
		clusters = append(clusters, rc)
	}
	return printWaves(w, spec.Rollout, rollout.Waves(spec.Rollout, clusters))
}

// printWaves prints the waves of a change, one line each.
func printWaves(w io.Writer, s *policyv1alpha1.RolloutStrategy, waves []rollout.Wave) error {
	typ := policyv1alpha1.RolloutAll
	if s != nil && s.Type != "" {
		typ = s.Type
	}
	fmt.Fprintf(w, "Strategy: %s, %d waves (each after the one before is done", typ, len(waves))
	if s != nil && s.MinSuccessSeconds > 0 {
		fmt.Fprintf(w, " and healthy for %ds", s.MinSuccessSeconds)
	}
	fmt.Fprintln(w, ")")
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "WAVE\tSTAGE\tWAITS FOR\tCLUSTERS\t")
	for i, wv := range waves {
		var waits []string
		if wv.WaitSeconds > 0 {
			waits = append(waits, fmt.Sprintf("%ds", wv.WaitSeconds))
		}
		if wv.Approval != "" {
			waits = append(waits, "approval ("+string(wv.Approval)+")")
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t\n", i+1, orDash(wv.Stage), orDash(strings.Join(waits, ", ")), strings.Join(wv.Clusters, ", "))
	}
	return tw.Flush()
}
