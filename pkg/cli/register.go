package cli

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"os"
	"slices"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/shepherd-io/shepherd/pkg/clusterclient"
	"github.com/shepherd-io/shepherd/pkg/install"
	"github.com/shepherd-io/shepherd/pkg/kubeconfig"
	"github.com/shepherd-io/shepherd/pkg/membership"
	"github.com/shepherd-io/shepherd/pkg/scheme"
)

type registerOptions struct {
	hub              hubFlags
	memberKubeconfig string
	provider         string
	region           string
	zone             string
	labels           []string
	hubServer        string
	tokenTTL         time.Duration
	output           string
	force            bool
	deploy           bool
	image            string
	allowRBAC        bool
}

func newRegisterCommand() *cobra.Command {
	o := registerOptions{}
	cmd := &cobra.Command{
		Use:   "register NAME",
		Short: "Add a Pull cluster to the fleet: its agent connects to the hub, the hub never dials it",
		Long: `Register the Pull cluster NAME on the hub, for a member behind NAT or a
firewall, or one whose credentials must not leave it. The hub never dials a
Pull cluster; "shepherd agent" runs in the member and does the work there.

register creates on the hub:
  - the Cluster NAME with spec.syncMode Pull, no endpoint and no credentials;
  - its execution namespace shepherd-es-NAME with the ServiceAccount
    shepherd-agent, bound to a Role that reads and updates (never creates or
    deletes) the Works of that namespace and their status, and holds the
    agent's Lease;
  - the ClusterRole and ClusterRoleBinding shepherd-agent:NAME, which read and
    write the status of that one Cluster, read the health interpreters and
    interpreter customizations, and get hub namespaces by name (their Pod
    Security labels).
A stolen agent token reaches nothing else: no other cluster's Works, no
Secrets, no other Cluster. Everything register creates is owned by the
Cluster and goes with it ("shepherd unjoin NAME").

It then writes a kubeconfig for the agent (the hub's CA and a token of
shepherd-agent valid for --token-ttl) to --output, or prints it. Give the agent
the hub's address as the member sees it with --hub-server when it differs from
the one in your hub kubeconfig.

With --member-kubeconfig, the member's identity (the UID of its kube-system
namespace) is recorded in the Cluster: an agent started in another cluster
reports it not Ready and applies nothing. An existing NAME is refused; --force
issues new credentials for a registered Pull cluster and revokes the old ones.

With --deploy, the agent's ServiceAccount in the member is bound to the
ClusterRole shepherd-agent, which can create, change and delete objects of any
kind but not grant RBAC rights it does not hold: the member's API server
refuses a propagated ClusterRole or binding that grants more.
--allow-rbac-propagation also binds it to shepherd-agent:rbac-propagation,
which lets it escalate and bind roles and cluster roles, so operators'
install manifests apply. The agent is then as powerful as the member's
administrator: whoever can write policies on the hub can grant themselves any
right in the member (see docs/fleet-integrity.md). Off by default; a --deploy
without it removes the grant.`,
		Example: `  shepherd register edge-1 --provider onprem --region eu --output edge-1-hub.kubeconfig \
    --hub-server https://hub.example.com:6443 --member-kubeconfig edge-1.kubeconfig

  # then, in the member
  shepherd agent --cluster edge-1 --hub-kubeconfig edge-1-hub.kubeconfig`,
		Args: exactlyOneName("register"),
		RunE: func(cmd *cobra.Command, args []string) error { return runRegister(cmd, args[0], o) },
	}
	o.hub.AddTo(cmd)
	f := cmd.Flags()
	f.StringVar(&o.memberKubeconfig, "member-kubeconfig", "", "kubeconfig of the member, read once to record its identity (optional; nothing is stored)")
	f.StringVar(&o.provider, "provider", "", "cloud provider or owner of the member, e.g. aws")
	f.StringVar(&o.region, "region", "", "region of the member")
	f.StringVar(&o.zone, "zone", "", "zone of the member")
	f.StringArrayVar(&o.labels, "label", nil, "label KEY=VALUE for the Cluster; repeat for more")
	f.StringVar(&o.hubServer, "hub-server", "", "URL the agent reaches the hub at (default: the server of the hub kubeconfig)")
	f.DurationVar(&o.tokenTTL, "token-ttl", membership.DefaultAgentTokenTTL, "how long the agent's token is valid")
	f.StringVarP(&o.output, "output", "o", "", "write the agent's kubeconfig to this file (mode 0600) instead of printing it")
	f.BoolVar(&o.force, "force", false, "issue new agent credentials for a Pull cluster that is registered already, revoking the old ones")
	f.BoolVar(&o.deploy, "deploy", false, "also run the agent in the member (needs --member-kubeconfig): the manifests of config/agent, with the agent's kubeconfig in the Secret shepherd-agent/shepherd-agent-hub")
	f.StringVar(&o.image, "image", "", "image of the agent with --deploy (default: that of config/agent)")
	f.BoolVar(&o.allowRBAC, "allow-rbac-propagation", false, "with --deploy: let the agent escalate and bind roles and cluster roles in the member, so propagated RBAC objects that grant more than its ClusterRole holds are applied; it can then grant itself any right there (off by default)")
	return cmd
}

func runRegister(cmd *cobra.Command, name string, o registerOptions) error {
	labels, err := parseLabels(o.labels)
	if err != nil {
		return err
	}
	ro := membership.RegisterOptions{
		Name: name, Provider: o.provider, Region: o.region, Zone: o.zone, Labels: labels,
		HubServer: o.hubServer, TokenTTL: o.tokenTTL, Force: o.force,
	}
	if err := ro.Validate(); err != nil {
		return err
	}
	if o.deploy && o.memberKubeconfig == "" {
		return fmt.Errorf("--deploy needs --member-kubeconfig: the kubeconfig of the member to run the agent in")
	}
	if o.allowRBAC && !o.deploy {
		return fmt.Errorf("--allow-rbac-propagation grants the agent's ServiceAccount in the member, which only --deploy creates: add --deploy (with --member-kubeconfig), or grant an agent you run yourself escalate and bind on roles and clusterroles")
	}
	if o.image != "" && !o.deploy {
		return fmt.Errorf("--image is the agent's image with --deploy; without --deploy nothing is deployed")
	}
	if o.image != "" {
		if err := install.ValidateImage(o.image); err != nil {
			return err
		}
	}
	if o.hubServer != "" {
		if u, err := url.Parse(o.hubServer); err != nil || u.Scheme != "https" || u.Host == "" {
			return fmt.Errorf("--hub-server %q: give the hub's API server URL as the member sees it, e.g. https://hub.example.com:6443", o.hubServer)
		}
	}
	cfg, err := o.hub.RestConfig()
	if err != nil {
		return err
	}
	cfg.Timeout = hubRequestTimeout
	hub, err := client.New(cfg, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		return fmt.Errorf("hub at %s: %w", cfg.Host, err)
	}
	if o.memberKubeconfig != "" {
		if ro.ID, err = memberIdentity(cmd.Context(), o.memberKubeconfig); err != nil {
			return err
		}
	}
	reg, err := membership.Register(cmd.Context(), cfg, hub, ro)
	if err != nil {
		return oneLine(err)
	}
	out, errOut := cmd.OutOrStdout(), cmd.ErrOrStderr()
	if o.deploy {
		if err := deployAgent(cmd.Context(), o, name, reg.Kubeconfig); err != nil {
			return fmt.Errorf("Pull cluster %q registered, but deploying its agent failed (run register again with --force --deploy): %w", name, err)
		}
		fmt.Fprintf(out, "Pull cluster %q registered; its agent runs in the member (Deployment %s/%s, token valid until %s).\n",
			name, install.AgentNamespace, install.AgentDeployment, reg.Expires.UTC().Format(time.RFC3339))
		if o.output == "" {
			return nil
		}
	}
	if o.output == "" {
		fmt.Fprintf(errOut, "Pull cluster %q registered; the agent's kubeconfig (token valid until %s) follows.\n", name, reg.Expires.UTC().Format(time.RFC3339))
		_, err := out.Write(reg.Kubeconfig)
		return err
	}
	if err := os.WriteFile(o.output, reg.Kubeconfig, 0o600); err != nil {
		return fmt.Errorf("--output %s: %w", o.output, err)
	}
	fmt.Fprintf(out, "Pull cluster %q registered; the agent's kubeconfig is in %s (token valid until %s).\n", name, o.output, reg.Expires.UTC().Format(time.RFC3339))
	fmt.Fprintf(out, "Start the agent in the member:\n  shepherd agent --cluster %s --hub-kubeconfig %s\n", name, o.output)
	return nil
}

// deployAgent applies config/agent to the member, with the agent's hub
// kubeconfig and cluster name, and grants or withdraws RBAC propagation.
func deployAgent(ctx context.Context, o registerOptions, name string, kubeconfig []byte) error {
	objs, err := install.AgentManifests(name, o.image, kubeconfig)
	if err != nil {
		return err
	}
	grant := install.AgentRBACPropagation()
	if o.allowRBAC {
		objs = append(objs, grant...)
	}
	cfg, err := memberConfig(o.memberKubeconfig)
	if err != nil {
		return fmt.Errorf("--member-kubeconfig: %w", err)
	}
	cfg.Timeout = hubRequestTimeout
	mc, err := client.New(cfg, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		return err
	}
	if err := install.Apply(ctx, mc, objs, io.Discard); err != nil {
		return err
	}
	if o.allowRBAC {
		return nil
	}
	// Withdraw an earlier grant (binding, then role); only objects with
	// Shepherd's label are deleted.
	for _, g := range slices.Backward(grant) {
		cur := &unstructured.Unstructured{}
		cur.SetGroupVersionKind(g.GroupVersionKind())
		err := mc.Get(ctx, client.ObjectKeyFromObject(g), cur)
		if apierrors.IsNotFound(err) || (err == nil && cur.GetLabels()["app.kubernetes.io/part-of"] != "shepherd") {
			continue
		}
		if err == nil {
			err = mc.Delete(ctx, cur, client.Preconditions{UID: ptr.To(cur.GetUID())})
		}
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("withdrawing %s %s: %w", g.GetKind(), g.GetName(), err)
		}
	}
	return nil
}

// memberIdentity reads the member's identity with its kubeconfig.
func memberIdentity(ctx context.Context, path string) (string, error) {
	cfg, err := memberConfig(path)
	if err != nil {
		return "", fmt.Errorf("--member-kubeconfig: %w", err)
	}
	cfg.Timeout = hubRequestTimeout
	kc, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return "", fmt.Errorf("--member-kubeconfig %s: %w", path, err)
	}
	id, err := clusterclient.Identity(ctx, kc)
	if err != nil {
		return "", fmt.Errorf("--member-kubeconfig %s: reading the member's identity (the UID of its kube-system namespace): %w", path, err)
	}
	return id, nil
}

// memberConfig loads the member of --member-kubeconfig (see package
// kubeconfig): the file, else the pod's ServiceAccount.
func memberConfig(path string) (*rest.Config, error) {
	l := kubeconfig.Member(path, "")
	l.KubeconfigFlag, l.ContextFlag = "--member-kubeconfig", "--member-context"
	return l.Load()
}
