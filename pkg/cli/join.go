package cli

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/shepherd-io/shepherd/pkg/membership"
	"github.com/shepherd-io/shepherd/pkg/scheme"
)

// hubRequestTimeout bounds each request to the hub, so a stopped hub fails
// the command quickly instead of hanging.
const hubRequestTimeout = 15 * time.Second

type joinOptions struct {
	hub         hubFlags
	kubeconfig  string
	context     string
	provider    string
	region      string
	zone        string
	labels      []string
	namespace   string
	timeout     time.Duration
	force       bool
	credentials string
	allowRBAC   bool
}

func newJoinCommand() *cobra.Command {
	o := joinOptions{}
	cmd := &cobra.Command{
		Use:   "join NAME --kubeconfig FILE",
		Short: "Add a member cluster to the fleet",
		Long: `Add a member cluster to the fleet under NAME.

join first checks that the member answers with the given credentials; it
writes nothing for a member the hub cannot reach. It then stores a minimal
kubeconfig for the chosen context (certificates embedded) in the Secret
shepherd-system/NAME on the hub and creates the Cluster NAME pointing at it.
Running join again updates the Cluster and the Secret; it is safe to repeat.

By default join does not store the given credentials: it creates in the member
the ServiceAccount shepherd-system/shepherd-hub bound to the ClusterRole
shepherd:hub, checks with SelfSubjectAccessReviews that it holds the rights
Works need, and stores a short-lived token of it, which the controllers renew
before it expires. --credentials kubeconfig stores the given kubeconfig instead.

shepherd:hub can create, change and delete objects of any kind, but not grant
RBAC rights it does not hold: the member's API server refuses a propagated
ClusterRole or binding (an operator's install manifest has them) that grants
more. --allow-rbac-propagation adds the ClusterRole and ClusterRoleBinding
shepherd:hub:rbac-propagation, which let the ServiceAccount escalate and bind
roles and cluster roles. That makes the hub's identity in the member as
powerful as its administrator: whoever can write policies on the hub can then
grant themselves any right in the member (see docs/fleet-integrity.md). It is
off by default; joining again without it removes the grant.

join records the member's identity (the UID of its kube-system namespace) in
the Cluster's spec.id. It refuses to join a member that is already joined under
another name, and to re-point NAME at a different cluster unless --force is
given. The controllers check the identity on every probe: a Cluster whose
endpoint or credentials come to reach another cluster is not Ready and nothing
is applied to it.

NAME must be a lowercase DNS label of at most 48 characters. Credentials that
run a command (exec or auth-provider plugins, as cloud CLIs install) cannot be
used from the hub: give a kubeconfig with a token or a client certificate.`,
		Example: `  # join the cluster of the current context of member.yaml
  shepherd join eu-west-1 --kubeconfig member.yaml

  # pick a context and describe where the cluster runs
  shepherd join us-east-1 --kubeconfig ~/.kube/config --context prod-us \
    --provider aws --region us-east-1 --zone us-east-1a --label env=prod

  # let policies propagate RBAC objects (an operator's ClusterRoles)
  shepherd join eu-west-1 --kubeconfig member.yaml --allow-rbac-propagation

  # then
  kubectl get clusters`,
		Args: exactlyOneName("join"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runJoin(cmd, args[0], o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.kubeconfig, "kubeconfig", "", "kubeconfig of the member cluster (required)")
	f.StringVar(&o.context, "context", "", "context of --kubeconfig to use (default: its current context)")
	f.StringVar(&o.provider, "provider", "", "cloud provider or owner of the member, e.g. aws")
	f.StringVar(&o.region, "region", "", "region of the member")
	f.StringVar(&o.zone, "zone", "", "zone of the member")
	f.StringArrayVar(&o.labels, "label", nil, "label KEY=VALUE for the Cluster; repeat for more")
	f.StringVar(&o.namespace, "namespace", membership.DefaultNamespace, "hub namespace of the credentials Secret")
	f.DurationVar(&o.timeout, "timeout", membership.DefaultProbeTimeout, "how long to wait for the member to answer")
	o.hub.AddTo(cmd)
	f.BoolVar(&o.force, "force", false, "re-point an existing NAME at a member with another identity (its workloads move there)")
	f.StringVar(&o.credentials, "credentials", membership.CredentialsServiceAccount, "what the hub stores: service-account (a ServiceAccount with the documented ClusterRole shepherd:hub is created in the member; its short-lived token is stored and renewed) or kubeconfig (the given credentials as they are)")
	f.BoolVar(&o.allowRBAC, "allow-rbac-propagation", false, "let the hub's ServiceAccount escalate and bind roles and cluster roles in the member, so propagated RBAC objects that grant more than shepherd:hub holds are applied; it can then grant itself any right there (off by default; a join without it withdraws the grant)")
	return cmd
}

func runJoin(cmd *cobra.Command, name string, o joinOptions) error {
	if o.kubeconfig == "" {
		return errors.New("--kubeconfig is required: the kubeconfig of the member cluster to join")
	}
	labels, err := parseLabels(o.labels)
	if err != nil {
		return err
	}
	hub, _, err := hubClient(o.hub)
	if err != nil {
		return err
	}
	res, err := membership.Join(cmd.Context(), hub, membership.JoinOptions{
		Name: name, KubeconfigPath: o.kubeconfig, Context: o.context,
		Provider: o.provider, Region: o.region, Zone: o.zone, Labels: labels,
		Namespace: o.namespace, ProbeTimeout: o.timeout, Force: o.force, Credentials: o.credentials,
		AllowRBACPropagation: o.allowRBAC,
	})
	if err != nil {
		return oneLine(err)
	}
	out := cmd.OutOrStdout()
	fmt.Fprintf(out, "Cluster %q joined: %s (Kubernetes %s); credentials in Secret %s/%s.\n",
		name, res.Endpoint, res.Version, res.Secret.Namespace, res.Secret.Name)
	if res.RepointedFrom != "" {
		fmt.Fprintf(out, "Re-pointed from the cluster with identity %s to %s: objects Shepherd propagated to the old cluster stay there; remove them by hand if it is still running.\n",
			res.RepointedFrom, res.Identity)
	}
	fmt.Fprintf(out, "  kubectl get cluster %s\n", name)
	return nil
}

type unjoinOptions struct {
	hub     hubFlags
	timeout time.Duration
	force   bool
}

func newUnjoinCommand() *cobra.Command {
	o := unjoinOptions{}
	cmd := &cobra.Command{
		Use:   "unjoin NAME",
		Short: "Remove a member cluster from the fleet",
		Long: `Remove the member cluster NAME from the fleet: delete its Cluster (the
scheduler moves its workloads to other clusters), wait while the objects
Shepherd propagated are removed from the member (or released, where a policy
preserves resources), then delete the credentials Secret that "shepherd join"
created. Objects Shepherd did not create or adopt are never touched.

If the Cluster is still being cleaned up after --timeout, the Secret is kept
(cleanup may still need to reach the member); run unjoin again later. With
--force, unjoin gives up on a member it cannot reach after --timeout: the
Cluster goes without reaching it, and the objects that may remain there are
listed, and recorded in the ConfigMap shepherd-unjoined-NAME.`,
		Example: `  shepherd unjoin eu-west-1

  # a member that is gone for good
  shepherd unjoin eu-west-1 --force --timeout 10s`,
		Args: exactlyOneName("unjoin"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runUnjoin(cmd, args[0], o)
		},
	}
	cmd.Flags().DurationVar(&o.timeout, "timeout", membership.DefaultUnjoinTimeout, "how long to wait for the Cluster to be deleted")
	cmd.Flags().BoolVar(&o.force, "force", false, "after --timeout, remove the Cluster without reaching the member, recording what may remain there")
	o.hub.AddTo(cmd)
	return cmd
}

func runUnjoin(cmd *cobra.Command, name string, o unjoinOptions) error {
	hub, where, err := hubClient(o.hub)
	if err != nil {
		return err
	}
	out := cmd.OutOrStdout()
	res, err := membership.Unjoin(cmd.Context(), hub, name, membership.UnjoinOptions{
		Timeout: o.timeout, Force: o.force,
		Progress: func(msg string) { fmt.Fprintf(out, "Cluster %q: %s\n", name, msg) },
	})
	if errors.Is(err, membership.ErrNotJoined) {
		return fmt.Errorf("cluster %q is not joined to the hub at %s", name, where)
	}
	if err != nil {
		return oneLine(err)
	}
	fmt.Fprintf(out, "Cluster %q unjoined; its workloads move to the other clusters.\n", name)
	if res.Record != "" {
		fmt.Fprintf(out, "The member was not reached: these objects Shepherd propagated may remain there (recorded in ConfigMap %s):\n", res.Record)
		for _, r := range res.Remaining {
			fmt.Fprintf(out, "  %s\n", r)
		}
	}
	if res.SecretDeleted != "" {
		fmt.Fprintf(out, "Deleted Secret %s.\n", res.SecretDeleted)
	}
	if res.SecretKept != "" {
		fmt.Fprintln(out, res.SecretKept)
	}
	return nil
}

// exactlyOneName says what is missing in the command's own words rather
// than cobra's "accepts 1 arg(s), received 0".
func exactlyOneName(verb string) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		if len(args) != 1 {
			return fmt.Errorf("%s takes exactly one cluster NAME, got %d arguments (see shepherd %s --help)", verb, len(args), verb)
		}
		return membership.ValidateName(args[0])
	}
}

// parseLabels turns repeated --label KEY=VALUE flags into a map; the
// values are validated by membership.Join.
func parseLabels(flags []string) (map[string]string, error) {
	labels := map[string]string{}
	for _, kv := range flags {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("--label %q: want KEY=VALUE", kv)
		}
		labels[k] = v
	}
	return labels, nil
}

// hubClient builds a client of the hub (see package kubeconfig). It
// returns where the hub is, for messages.
func hubClient(f hubFlags) (client.Client, string, error) {
	cfg, err := f.RestConfig()
	if err != nil {
		return nil, "", err
	}
	cfg.Timeout = hubRequestTimeout
	c, err := client.New(cfg, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		return nil, "", fmt.Errorf("hub at %s: %w", cfg.Host, err)
	}
	return c, cfg.Host, nil
}

// oneLine flattens an error to one line: some upstream errors (e.g. an
// aggregate of validation errors) span several.
func oneLine(err error) error {
	return errors.New(strings.Join(strings.Fields(err.Error()), " "))
}
