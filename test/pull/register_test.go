package pull

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/shepherd-io/shepherd/pkg/cli"
	"github.com/shepherd-io/shepherd/pkg/install"
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
