package membership

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
	configv1alpha1 "github.com/shepherd-io/shepherd/api/config/v1alpha1"
	mcv1alpha1 "github.com/shepherd-io/shepherd/api/multicluster/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/install"
	"github.com/shepherd-io/shepherd/pkg/names"
)

// AgentServiceAccount names the agent's ServiceAccount (and its Role and
// RoleBinding) in the cluster's execution namespace on the hub.
const AgentServiceAccount = clusterv1alpha1.AgentServiceAccountName

// DefaultAgentTokenTTL is how long the agent's token is valid.
const DefaultAgentTokenTTL = 365 * 24 * time.Hour

// RegisterOptions describe a Pull cluster to register.
type RegisterOptions struct {
	// Name of the Cluster: a DNS-1123 label of at most 48 characters.
	Name string
	// Provider, Region and Zone are copied into the Cluster's spec.
	Provider, Region, Zone string
	// Labels are set on the Cluster.
	Labels map[string]string
	// ID is the member's identity (the UID of its kube-system namespace),
	// checked by the agent on every probe; empty skips the check.
	ID string
	// HubServer is the URL the agent reaches the hub at (default: the
	// server of the configuration Register is given, which may be an
	// address only the registering user can reach).
	HubServer string
	// TokenTTL is how long the agent's token is valid (default
	// DefaultAgentTokenTTL).
	TokenTTL time.Duration
	// Force issues new agent credentials for a Pull cluster that is
	// registered already. Without it Register refuses an existing name.
	Force bool
}

// Registration is what Register wrote and what the agent needs.
type Registration struct {
	Cluster *clusterv1alpha1.Cluster
	// Kubeconfig is the agent's self-contained kubeconfig for the hub:
	// server, CA and token, nothing read from files.
	Kubeconfig []byte
	// Expires is when the token stops working.
	Expires time.Time
}

// Validate checks the options before anything is written, with messages
// naming the `shepherd register` argument or flag, and fills in defaults.
func (o *RegisterOptions) Validate() error {
	j := JoinOptions{Name: o.Name, Provider: o.Provider, Region: o.Region, Zone: o.Zone, Labels: o.Labels}
	if err := j.validate(); err != nil {
		return err
	}
	if o.TokenTTL == 0 {
		o.TokenTTL = DefaultAgentTokenTTL
	}
	if o.TokenTTL < 10*time.Minute {
		return fmt.Errorf("--token-ttl %s: must be at least 10m (the API server's minimum)", o.TokenTTL)
	}
	return nil
}

// Register makes a Pull cluster part of the fleet: the hub never dials it;
// an agent in the member does the work with credentials that reach only
// what that cluster needs. It creates, on the hub:
//   - the Cluster (syncMode Pull, no endpoint, no credentials Secret);
//   - its execution namespace, and there the ServiceAccount shepherd-agent,
//     bound to a Role that reads and updates (never creates) that
//     namespace's Works and their status, and holds the agent Lease;
//   - a ClusterRole and binding that read and write the status of that one
//     Cluster and read the interpreters every agent needs.
//
// Registering again (opts.Force) issues new credentials and revokes the
// old ones: the agent's ServiceAccount is created anew.
//
// All of them are owned by the Cluster, so they go when it goes (`shepherd
// unjoin`). The returned kubeconfig holds a token of that ServiceAccount.
func Register(ctx context.Context, hubCfg *rest.Config, hub client.Client, opts RegisterOptions) (*Registration, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	existing := &clusterv1alpha1.Cluster{}
	err := hub.Get(ctx, types.NamespacedName{Name: opts.Name}, existing)
	switch {
	case apierrors.IsNotFound(err):
		existing = nil
	case err != nil:
		return nil, hubError(hubCfg, err)
	case existing.Spec.SyncMode != clusterv1alpha1.Pull:
		return nil, fmt.Errorf("cluster %q is already joined in %s mode; a cluster's mode cannot change: `shepherd unjoin %s` first, or register under another name", opts.Name, existing.Spec.SyncMode, opts.Name)
	case !opts.Force:
		return nil, fmt.Errorf("cluster %q is already registered: pick another name, or pass --force to issue new agent credentials for it", opts.Name)
	}
	if opts.ID != "" {
		if err := refuseSecondName(ctx, hub, opts.Name, opts.ID); err != nil {
			return nil, err
		}
	}
	cluster := existing
	if cluster == nil {
		cluster = &clusterv1alpha1.Cluster{
			ObjectMeta: metav1.ObjectMeta{Name: opts.Name, Labels: opts.Labels},
			Spec: clusterv1alpha1.ClusterSpec{
				ID: opts.ID, SyncMode: clusterv1alpha1.Pull,
				Provider: opts.Provider, Region: opts.Region, Zone: opts.Zone,
			},
		}
		if err := hub.Create(ctx, cluster); err != nil {
			return nil, hubError(hubCfg, err)
		}
	}
	reg, err := provisionAgent(ctx, hubCfg, hub, cluster, opts)
	if err != nil && existing == nil {
		// Nothing half-registered: the Cluster's owned objects go with it.
		if derr := hub.Delete(ctx, cluster); derr != nil && !apierrors.IsNotFound(derr) {
			err = errors.Join(err, fmt.Errorf("removing the Cluster again: %w", derr))
		}
	}
	return reg, err
}

// refuseSecondName refuses to register a member that is in the fleet
// under another name: both Clusters' Works would be applied to it.
func refuseSecondName(ctx context.Context, hub client.Client, name, id string) error {
	list := &clusterv1alpha1.ClusterList{}
	if err := hub.List(ctx, list); err != nil {
		return fmt.Errorf("listing Clusters: %w", err)
	}
	for _, c := range list.Items {
		if c.Name != name && c.Spec.ID == id {
			return fmt.Errorf("the member (identity %s) is already in the fleet as cluster %q: a second name would send it both clusters' workloads; unjoin %s first, or register it as %s", id, c.Name, c.Name, c.Name)
		}
	}
	return nil
}

// provisionAgent writes the agent's namespace, ServiceAccount and RBAC,
// owned by cluster, and issues its token.
func provisionAgent(ctx context.Context, hubCfg *rest.Config, hub client.Client, cluster *clusterv1alpha1.Cluster, opts RegisterOptions) (*Registration, error) {
	ns := names.ExecutionNamespace(cluster.Name)
	owner := []metav1.OwnerReference{*metav1.NewControllerRef(cluster, clusterv1alpha1.SchemeGroupVersion.WithKind("Cluster"))}
	labels := map[string]string{workv1alpha1.LabelManagedBy: workv1alpha1.ManagedByShepherd, workv1alpha1.LabelCluster: cluster.Name}
	meta := func(name, namespace string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Name: name, Namespace: namespace, Labels: labels, OwnerReferences: owner}
	}
	if err := ensureNamespace(ctx, hub, ns); err != nil {
		return nil, err
	}
	if err := revokeAgentTokens(ctx, hub, ns); err != nil {
		return nil, err
	}
	subject := []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: AgentServiceAccount, Namespace: ns}}
	clusterRole := "shepherd-agent:" + cluster.Name
	objs := []client.Object{
		&corev1.ServiceAccount{ObjectMeta: meta(AgentServiceAccount, ns)},
		&rbacv1.Role{ObjectMeta: meta(AgentServiceAccount, ns), Rules: agentRoleRules()},
		&rbacv1.RoleBinding{ObjectMeta: meta(AgentServiceAccount, ns), Subjects: subject,
			RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: AgentServiceAccount}},
		&rbacv1.ClusterRole{ObjectMeta: meta(clusterRole, ""), Rules: agentClusterRoleRules(cluster.Name)},
		&rbacv1.ClusterRoleBinding{ObjectMeta: meta(clusterRole, ""), Subjects: subject,
			RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: clusterRole}},
	}
	for _, o := range objs {
		if err := createOrReplace(ctx, hub, o); err != nil {
			return nil, fmt.Errorf("writing %T %s: %w", o, o.GetName(), err)
		}
	}
	if err := install.ApplyAgentGuard(ctx, hub); err != nil {
		return nil, fmt.Errorf("applying the admission policy that guards agents' Works: %w", err)
	}
	tr := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To(int64(opts.TokenTTL / time.Second))}}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: AgentServiceAccount, Namespace: ns}}
	if err := hub.SubResource("token").Create(ctx, sa, tr); err != nil {
		return nil, fmt.Errorf("issuing the agent's token: %w", err)
	}
	kc, err := agentKubeconfig(hubCfg, opts.HubServer, cluster.Name, tr.Status.Token)
	if err != nil {
		return nil, err
	}
	return &Registration{Cluster: cluster, Kubeconfig: kc, Expires: tr.Status.ExpirationTimestamp.Time}, nil
}

// agentRoleRules: in its execution namespace the agent reads its Works and
// updates them (its finalizer) and their status, holds its Lease, records
// events and renews its own token. It cannot create or delete a Work. It
// reports its member's Service exports as ExportedServices there (and
// nowhere else), and reads the hub's verdict on them.
func agentRoleRules() []rbacv1.PolicyRule {
	return []rbacv1.PolicyRule{
		{APIGroups: []string{mcv1alpha1.GroupName}, Resources: []string{"exportedservices"}, Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}},
		{APIGroups: []string{workv1alpha1.SchemeGroupVersion.Group}, Resources: []string{"works"}, Verbs: []string{"get", "list", "watch", "update", "patch"}},
		{APIGroups: []string{workv1alpha1.SchemeGroupVersion.Group}, Resources: []string{"works/status"}, Verbs: []string{"get", "update", "patch"}},
		{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: []string{"get", "list", "watch", "create", "update"}},
		{APIGroups: []string{"", "events.k8s.io"}, Resources: []string{"events"}, Verbs: []string{"create", "patch"}},
		// The agent renews its own token, and may request tokens of no
		// other ServiceAccount.
		{APIGroups: []string{""}, Resources: []string{"serviceaccounts/token"}, ResourceNames: []string{AgentServiceAccount}, Verbs: []string{"create"}},
	}
}

// agentClusterRoleRules: the agent reads and reports its own Cluster
// (list and watch only with a metadata.name field selector) and reads the
// interpreters. It reads no hub namespace: the Works carry the Pod
// Security labels of theirs (AnnotationPodSecurity).
func agentClusterRoleRules(cluster string) []rbacv1.PolicyRule {
	group := clusterv1alpha1.SchemeGroupVersion.Group
	return []rbacv1.PolicyRule{
		{APIGroups: []string{group}, Resources: []string{"clusters"}, ResourceNames: []string{cluster}, Verbs: []string{"get", "list", "watch"}},
		{APIGroups: []string{group}, Resources: []string{"clusters/status"}, ResourceNames: []string{cluster}, Verbs: []string{"get", "update", "patch"}},
		{APIGroups: []string{configv1alpha1.SchemeGroupVersion.Group}, Resources: []string{"healthinterpreters", "resourceinterpretercustomizations"}, Verbs: []string{"get", "list", "watch"}},
	}
}

// createOrReplace creates obj, or replaces what its name holds with it (a
// re-registration rewrites the rules as this version defines them).
func createOrReplace(ctx context.Context, hub client.Client, obj client.Object) error {
	err := hub.Create(ctx, obj)
	if !apierrors.IsAlreadyExists(err) {
		return err
	}
	cur := obj.DeepCopyObject().(client.Object)
	if err := hub.Get(ctx, client.ObjectKeyFromObject(obj), cur); err != nil {
		return err
	}
	obj.SetResourceVersion(cur.GetResourceVersion())
	return hub.Update(ctx, obj)
}

// agentKubeconfig is a kubeconfig for the hub with the agent's token and
// the hub's CA embedded.
func agentKubeconfig(hubCfg *rest.Config, server, cluster, token string) ([]byte, error) {
	if server == "" {
		server = hubCfg.Host
	}
	ca := hubCfg.CAData
	if len(ca) == 0 && hubCfg.CAFile != "" {
		data, err := os.ReadFile(hubCfg.CAFile)
		if err != nil {
			return nil, fmt.Errorf("reading the hub's CA %s: %w", hubCfg.CAFile, err)
		}
		ca = data
	}
	name := "shepherd-agent-" + cluster
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["shepherd-hub"] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: ca, InsecureSkipTLSVerify: len(ca) == 0 && hubCfg.Insecure}
	cfg.AuthInfos[name] = &clientcmdapi.AuthInfo{Token: token}
	cfg.Contexts[name] = &clientcmdapi.Context{Cluster: "shepherd-hub", AuthInfo: name}
	cfg.CurrentContext = name
	return clientcmd.Write(*cfg)
}

// hubError explains a failed request to the hub.
func hubError(hubCfg *rest.Config, err error) error {
	switch {
	case apierrors.IsUnauthorized(err):
		return fmt.Errorf("the hub at %s rejects these credentials (expired or wrong token): use a hub kubeconfig of an administrator: %w", hubCfg.Host, err)
	case apierrors.IsForbidden(err):
		return fmt.Errorf("the hub at %s forbids this: registering needs the right to create Clusters, namespaces, ServiceAccounts and RBAC: %w", hubCfg.Host, err)
	}
	return fmt.Errorf("reaching the hub at %s: %w", hubCfg.Host, err)
}

// revokeAgentTokens deletes the agent's ServiceAccount of a cluster being
// registered again (--force), so that the tokens issued before stop
// working at once: a ServiceAccount token is bound to the UID of the
// ServiceAccount it was issued for, and the new ServiceAccount has
// another. It waits until the old one is gone.
func revokeAgentTokens(ctx context.Context, hub client.Client, ns string) error {
	old := &corev1.ServiceAccount{}
	err := hub.Get(ctx, client.ObjectKey{Namespace: ns, Name: AgentServiceAccount}, old)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := hub.Delete(ctx, old, client.Preconditions{UID: &old.UID}); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("revoking the agent's old credentials (deleting ServiceAccount %s/%s): %w", ns, AgentServiceAccount, err)
	}
	return wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		cur := &corev1.ServiceAccount{}
		err := hub.Get(ctx, client.ObjectKey{Namespace: ns, Name: AgentServiceAccount}, cur)
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return err == nil && cur.UID != old.UID, err
	})
}
