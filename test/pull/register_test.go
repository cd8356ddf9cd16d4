package pull

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/cli"
	"github.com/shepherd-io/shepherd/pkg/install"
	"github.com/shepherd-io/shepherd/pkg/names"
	"github.com/shepherd-io/shepherd/test/fleetenv"
)

// shepherd runs the command line in-process against the fleet's hub.
func shepherd(args ...string) (string, error) {
	cmd := cli.NewRootCommand()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs(append(args, "--hub-kubeconfig", fleet.Hub.KubeconfigPath()))
	err := cmd.ExecuteContext(context.Background())
	return out.String(), err
}

// `shepherd register --deploy` runs the agent in the member from
// config/agent, with the kubeconfig it issued; a member already in the
// fleet under another name is refused.
func TestRegisterDeploysTheAgent(t *testing.T) {
	ctx := context.Background()
	old := fleet.AgentHubConfig(pullMember)
	kubeconfig := filepath.Join(t.TempDir(), "hub.kubeconfig")
	out, err := shepherd("register", pullMember, "--force", "--deploy", "--image", "registry.example.com/shepherd:test",
		"--member-kubeconfig", fleet.Member(pullMember).KubeconfigPath(), "--output", kubeconfig)
	if err != nil {
		t.Fatalf("register --deploy: %v\n%s", err, out)
	}
	issued, err := os.ReadFile(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	handOver(t, kubeconfig)
	// --force revoked the credentials the agent had: a stolen copy of
	// them no longer works.
	oldClient, err := kubernetes.NewForConfig(old)
	if err != nil {
		t.Fatal(err)
	}
	fleetenv.Eventually(t, "the old agent token refused", func() error {
		_, err := oldClient.CoordinationV1().Leases(names.ExecutionNamespace(pullMember)).Get(ctx, clusterv1alpha1.AgentLeaseName, metav1.GetOptions{})
		if apierrors.IsUnauthorized(err) {
			return nil
		}
		return fmt.Errorf("the old token still authenticates: %v", err)
	})
	m := memberCl[pullMember]
	s := &corev1.Secret{}
	if err := m.Get(ctx, client.ObjectKey{Namespace: install.AgentNamespace, Name: install.AgentHubSecret}, s); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(s.Data["kubeconfig"], issued) {
		t.Error("the Secret in the member does not hold the kubeconfig register wrote")
	}
	cm := &corev1.ConfigMap{}
	if err := m.Get(ctx, client.ObjectKey{Namespace: install.AgentNamespace, Name: install.AgentConfigMap}, cm); err != nil {
		t.Fatal(err)
	}
	if cm.Data["cluster"] != pullMember {
		t.Errorf("the agent's ConfigMap names cluster %q", cm.Data["cluster"])
	}
	d := &appsv1.Deployment{}
	if err := m.Get(ctx, client.ObjectKey{Namespace: install.AgentNamespace, Name: install.AgentDeployment}, d); err != nil {
		t.Fatal(err)
	}
	if img := d.Spec.Template.Spec.Containers[0].Image; img != "registry.example.com/shepherd:test" {
		t.Errorf("the agent's image is %q", img)
	}

	// The push member under a second name: refused, nothing written.
	out, err = shepherd("register", "second-name", "--member-kubeconfig", fleet.Member(pushMember).KubeconfigPath())
	if err == nil || !strings.Contains(err.Error(), `already in the fleet as cluster "`+pushMember+`"`) {
		t.Fatalf("registering %s again as second-name: %v\n%s", pushMember, err, out)
	}
}

// `shepherd get clusters` says which clusters are Pull.
func TestGetClustersShowsTheMode(t *testing.T) {
	out, err := shepherd("get", "clusters")
	if err != nil {
		t.Fatalf("get clusters: %v\n%s", err, out)
	}
	modes := map[string]string{}
	for _, line := range strings.Split(out, "\n")[1:] {
		if f := strings.Fields(line); len(f) > 1 {
			modes[f[0]] = f[1]
		}
	}
	if modes[pushMember] != "Push" || modes[pullMember] != "Pull" {
		t.Errorf("modes %v, want %s Push and %s Pull:\n%s", modes, pushMember, pullMember, out)
	}
}

// `shepherd register --deploy --allow-rbac-propagation` lets the agent
// store an operator's ClusterRole (rules on every resource) in its member;
// without the flag the member refuses it, and a --deploy without it
// withdraws an earlier grant.
func TestRegisterAllowRBACPropagation(t *testing.T) {
	ctx := context.Background()
	// The agent deployed in the member, as the member's API server sees it.
	cfg := rest.CopyConfig(fleet.Member(pullMember).RestConfig())
	cfg.Impersonate = rest.ImpersonationConfig{
		UserName: "system:serviceaccount:" + install.AgentNamespace + ":" + install.AgentDeployment,
		Groups:   []string{"system:serviceaccounts", "system:serviceaccounts:" + install.AgentNamespace, "system:authenticated"},
	}
	agent, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	admin := memberCl[pullMember]
	// grant stores, as the agent, a ClusterRole with every right, and
	// removes it again.
	grant := func() error {
		role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "e2e-operator-wide"},
			Rules: []rbacv1.PolicyRule{{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"*"}}}}
		if _, err := agent.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil {
			return err
		}
		return admin.Delete(ctx, role)
	}
	register := func(t *testing.T, extra ...string) {
		t.Helper()
		kubeconfig := filepath.Join(t.TempDir(), "hub.kubeconfig")
		args := append([]string{"register", pullMember, "--force", "--deploy", "--image", "registry.example.com/shepherd:test",
			"--member-kubeconfig", fleet.Member(pullMember).KubeconfigPath(), "--output", kubeconfig}, extra...)
		if out, err := shepherd(args...); err != nil {
			t.Fatalf("register: %v\n%s", err, out)
		}
		handOver(t, kubeconfig)
	}
	// refused waits until the member's authorizer refuses the grant (it
	// learns of RBAC changes through a watch).
	refused := func(t *testing.T) {
		t.Helper()
		fleetenv.Eventually(t, "the agent refused an escalating ClusterRole", func() error {
			err := grant()
			if apierrors.IsForbidden(err) && strings.Contains(err.Error(), "attempting to grant RBAC permissions not currently held") {
				return nil
			}
			return fmt.Errorf("got %v", err)
		})
	}

	t.Run("default: refused", func(t *testing.T) {
		register(t)
		refused(t)
	})
	t.Run("opted in: allowed", func(t *testing.T) {
		register(t, "--allow-rbac-propagation")
		fleetenv.Eventually(t, "the agent may grant", grant)
	})
	t.Run("deployed again without the flag: withdrawn", func(t *testing.T) {
		register(t)
		for _, o := range []client.Object{&rbacv1.ClusterRole{}, &rbacv1.ClusterRoleBinding{}} {
			if err := admin.Get(ctx, client.ObjectKey{Name: install.AgentRBACPropagationRole}, o); !apierrors.IsNotFound(err) {
				t.Errorf("%T %s still there: %v", o, install.AgentRBACPropagationRole, err)
			}
		}
		refused(t)
	})
}

// handOver gives the suite's in-process agent the credentials a
// registration with --force issued (it revoked the ones the agent had),
// and waits until the cluster is Ready again.
func handOver(t *testing.T, kubeconfig string) {
	t.Helper()
	data, err := os.ReadFile(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	if err := fleet.SetAgentCredentials(pullMember, data, agentOpts); err != nil {
		t.Fatal(err)
	}
	fleetenv.WaitClusterHealthy(t, hub, pullMember)
}
