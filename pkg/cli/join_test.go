package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/clientcmd"

	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/membership/membershiptest"
)

// run executes the shepherd command line and returns its output and error.
func run(args ...string) (string, error) {
	var out bytes.Buffer
	cmd := NewRootCommand()
	cmd.SetArgs(args)
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	err := cmd.ExecuteContext(context.Background())
	return out.String(), err
}

// TestJoinRefusesBadInput: mistakes are caught before any server is
// contacted, in one line that names the argument or flag.
func TestJoinRefusesBadInput(t *testing.T) {
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "absent"))
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"join"}, "join takes exactly one cluster NAME, got 0 arguments"},
		{[]string{"join", "a", "b"}, "got 2 arguments"},
		{[]string{"join", "Bad_Name", "--kubeconfig", "x"}, `invalid cluster NAME "Bad_Name"`},
		{[]string{"join", strings.Repeat("a", 49), "--kubeconfig", "x"}, "at most 48 characters"},
		{[]string{"join", "m1"}, "--kubeconfig is required"},
		{[]string{"join", "m1", "--kubeconfig", "x", "--label", "novalue"}, `--label "novalue": want KEY=VALUE`},
		{[]string{"join", "m1", "--kubeconfig", "x", "--label", "=v"}, `--label "=v": want KEY=VALUE`},
		{[]string{"join", "m1", "--kubeconfig", "x"}, "absent ($KUBECONFIG): "},
		{[]string{"unjoin"}, "unjoin takes exactly one cluster NAME"},
		{[]string{"unjoin", "UPPER"}, `invalid cluster NAME "UPPER"`},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			_, err := run(tc.args...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("multi-line error: %q", err)
			}
		})
	}
}

// TestHubKubeconfigDefault: without --hub-kubeconfig and $KUBECONFIG the
// hub's kubeconfig is the one "shepherd up" writes into its data dir.
func TestHubKubeconfigDefault(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("KUBECONFIG", "")
	t.Setenv("SHEPHERD_DATA_DIR", dir)
	_, err := run("unjoin", "m1")
	want := filepath.Join(dir, "kubeconfig")
	if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), `start a hub with "shepherd up"`) {
		t.Fatalf("err = %v, want it to name %s", err, want)
	}
}

// TestJoinAndUnjoinCommands runs the commands against a real hub and a real
// member, as a user would after "shepherd up".
func TestJoinAndUnjoinCommands(t *testing.T) {
	hub := membershiptest.StartHub(t)
	member := membershiptest.StartMember(t, "m1")
	hubKC := hub.ControlPlane.KubeconfigPath()
	t.Setenv("KUBECONFIG", hubKC) // the default hub kubeconfig

	closed := filepath.Join(t.TempDir(), "closed.yaml")
	cfg, err := clientcmd.LoadFromFile(member.KubeconfigPath())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cfg.Clusters {
		c.Server = fmt.Sprintf("https://127.0.0.1:%d", membershiptest.FreePort(t))
	}
	if err := clientcmd.WriteToFile(*cfg, closed); err != nil {
		t.Fatal(err)
	}
	_, err = run("join", "m1", "--kubeconfig", closed, "--timeout", "2s")
	if err == nil || !strings.HasPrefix(err.Error(), `cannot reach member "m1" at https://127.0.0.1:`) {
		t.Fatalf("join of an unreachable member: %v", err)
	}

	out, err := run("join", "m1", "--kubeconfig", member.KubeconfigPath(), "--region", "eu", "--label", "env=dev", "--label", "tier=gold")
	if err != nil {
		t.Fatalf("join: %v\n%s", err, out)
	}
	if !strings.Contains(out, fmt.Sprintf(`Cluster "m1" joined: %s`, member.URL())) || !strings.Contains(out, "Secret shepherd-system/m1") {
		t.Errorf("join output:\n%s", out)
	}
	hc := membershiptest.HubClient(t, hub)
	c := &clusterv1alpha1.Cluster{}
	if err := hc.Get(context.Background(), types.NamespacedName{Name: "m1"}, c); err != nil {
		t.Fatal(err)
	}
	if c.Spec.Region != "eu" || c.Labels["env"] != "dev" || c.Labels["tier"] != "gold" {
		t.Errorf("cluster: %+v", c)
	}

	os.Unsetenv("KUBECONFIG")
	out, err = run("unjoin", "m1", "--hub-kubeconfig", hubKC)
	if err != nil || !strings.Contains(out, `Cluster "m1" unjoined`) || !strings.Contains(out, "Deleted Secret shepherd-system/m1") {
		t.Fatalf("unjoin: %v\n%s", err, out)
	}
	_, err = run("unjoin", "m1", "--hub-kubeconfig", hubKC)
	if err == nil || !strings.Contains(err.Error(), `cluster "m1" is not joined to the hub at https://`) {
		t.Fatalf("second unjoin: %v", err)
	}
}
