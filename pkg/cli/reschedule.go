package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"
	"sigs.k8s.io/controller-runtime/pkg/client"

	taskv1alpha1 "github.com/shepherd-io/shepherd/api/task/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/actions"
	"github.com/shepherd-io/shepherd/pkg/interpreter"
)

type rescheduleOptions struct {
	hub             hubFlags
	namespace       string
	policies        []string
	clusterPolicies []string
	ttl             time.Duration
	wait            bool
	timeout         time.Duration
}

func newRescheduleCommand() *cobra.Command {
	o := &rescheduleOptions{}
	cmd := &cobra.Command{
		Use:   "reschedule [TYPE/NAME ...] [--policy NAMESPACE/NAME] [--cluster-policy NAME]",
		Short: "Recompute the placement of workloads (creates a RescheduleTask)",
		Long: `Ask the scheduler to place workloads again from scratch, although their
replicas and placement did not change: e.g. to move replicas back to a
cluster that recovered. Creates a RescheduleTask and, with --wait, follows
it until every workload was rescheduled or failed.

TYPE is a built-in kind, singular, plural or short: deployment (deploy),
statefulset (sts), replicaset (rs), daemonset (ds), job, cronjob (cj), pod
(po), service (svc), configmap (cm), secret, serviceaccount (sa),
persistentvolumeclaim (pvc), ingress (ing), horizontalpodautoscaler (hpa),
poddisruptionbudget (pdb); any other kind is written Kind.version.group (Kind.version for the core group), e.g.
Rollout.v1alpha1.argoproj.io/web. Workloads are looked up in --namespace.
Cluster-scoped templates are rescheduled through their
ClusterPropagationPolicy (--cluster-policy) or a RescheduleTask manifest.

The command fails when a workload could not be rescheduled.`,
		Example: `  # move nginx back per its placement, following the task
  shepherd reschedule deployment/nginx -n default

  # every workload of a PropagationPolicy and of a ClusterPropagationPolicy
  shepherd reschedule --policy shop/checkout --cluster-policy platform

  # several at once; delete the task an hour after it finished, do not wait
  shepherd reschedule deploy/web sts/cache cm/settings --ttl 1h --wait=false`,
		RunE: func(cmd *cobra.Command, args []string) error {
			spec, err := o.spec(args)
			if err != nil {
				return err
			}
			if !cmd.Flags().Changed("wait") {
				o.wait = term.IsTerminal(int(os.Stdout.Fd()))
			}
			c, err := o.hub.client()
			if err != nil {
				return err
			}
			return o.run(cmd.Context(), c, spec, cmd.OutOrStdout())
		},
	}
	o.hub.AddTo(cmd)
	cmd.Flags().StringVarP(&o.namespace, "namespace", "n", "default", "namespace of the TYPE/NAME workloads")
	cmd.Flags().StringArrayVar(&o.policies, "policy", nil, "reschedule every workload of this PropagationPolicy (NAMESPACE/NAME; repeatable)")
	cmd.Flags().StringArrayVar(&o.clusterPolicies, "cluster-policy", nil, "reschedule every workload of this ClusterPropagationPolicy (repeatable)")
	cmd.Flags().DurationVar(&o.ttl, "ttl", 0, "delete the task this long after it finished (default: keep it)")
	cmd.Flags().BoolVar(&o.wait, "wait", false, "follow the task and print each workload's outcome (default: true when stdout is a terminal)")
	cmd.Flags().DurationVar(&o.timeout, "timeout", 5*time.Minute, "how long --wait waits")
	return cmd
}

// spec builds the task's spec from the arguments and flags.
func (o *rescheduleOptions) spec(args []string) (taskv1alpha1.RescheduleTaskSpec, error) {
	var spec taskv1alpha1.RescheduleTaskSpec
	for _, arg := range args {
		sel, err := parseTarget(arg, o.namespace)
		if err != nil {
			return spec, err
		}
		spec.TargetRefResource = append(spec.TargetRefResource, sel)
	}
	for _, p := range o.policies {
		ns, name, ok := strings.Cut(p, "/")
		if !ok || ns == "" || name == "" || strings.Contains(name, "/") {
			return spec, fmt.Errorf("--policy %q: want NAMESPACE/NAME", p)
		}
		spec.TargetRefPolicy = append(spec.TargetRefPolicy, taskv1alpha1.PolicySelector{Namespace: ns, Name: name})
	}
	for _, name := range o.clusterPolicies {
		if name == "" || strings.Contains(name, "/") {
			return spec, fmt.Errorf("--cluster-policy %q: want a NAME", name)
		}
		spec.TargetRefPolicy = append(spec.TargetRefPolicy, taskv1alpha1.PolicySelector{Name: name})
	}
	if len(spec.TargetRefResource)+len(spec.TargetRefPolicy) == 0 {
		return spec, fmt.Errorf("nothing to reschedule: name workloads as TYPE/NAME, or use --policy or --cluster-policy")
	}
	if o.ttl < 0 {
		return spec, fmt.Errorf("--ttl %s: must not be negative", o.ttl)
	}
	if o.ttl > 0 {
		secs := int32(o.ttl.Round(time.Second) / time.Second)
		spec.TTLSecondsAfterFinished = &secs
	}
	return spec, nil
}

// parseTarget parses TYPE/NAME, TYPE being a built-in name or
// Kind.version.group.
func parseTarget(arg, namespace string) (taskv1alpha1.ResourceSelector, error) {
	typ, name, ok := strings.Cut(arg, "/")
	if !ok || typ == "" || name == "" || strings.Contains(name, "/") {
		return taskv1alpha1.ResourceSelector{}, fmt.Errorf("%q: want TYPE/NAME, e.g. deployment/nginx", arg)
	}
	sel := taskv1alpha1.ResourceSelector{Namespace: namespace, Name: name}
	if apiVersion, kind, ok := interpreter.KindByName(typ); ok {
		sel.APIVersion, sel.Kind = apiVersion, kind
		return sel, nil
	}
	kind, gv, ok := strings.Cut(typ, ".")
	if !ok || kind == "" || gv == "" {
		return sel, fmt.Errorf("%q: unknown TYPE %q; use one of %s, or Kind.version.group", arg, typ, strings.Join(interpreter.KindNames(), ", "))
	}
	version, group, _ := strings.Cut(gv, ".")
	sel.Kind, sel.APIVersion = kind, version
	if group != "" {
		sel.APIVersion = group + "/" + version
	}
	return sel, nil
}

// run creates the task and, with --wait, follows it.
func (o *rescheduleOptions) run(ctx context.Context, c client.Client, spec taskv1alpha1.RescheduleTaskSpec, out io.Writer) error {
	task, err := actions.Reschedule(ctx, c, spec, "shepherd-cli")
	if err != nil {
		return err
	}
	if !o.wait {
		fmt.Fprintf(out, "rescheduletask/%s created; follow it with: kubectl get rescheduletask %s -o yaml\n", task.Name, task.Name)
		return nil
	}
	fmt.Fprintf(out, "rescheduletask/%s created\n", task.Name)
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	task, err = follow(ctx, c, task.Name, progressBar(out))
	if err != nil {
		return err
	}
	return report(out, task)
}
