package cli

import (
	"bytes"
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/cli/component"
	"github.com/shepherd-io/shepherd/pkg/install"
	"github.com/shepherd-io/shepherd/pkg/membership/membershiptest"
	"github.com/shepherd-io/shepherd/test/testenv"
)

// runCLI runs the shepherd command with args and returns its output.
func runCLI(args ...string) (string, error) {
	cmd := NewRootCommand()
	var out bytes.Buffer
	cmd.SetArgs(args)
	cmd.SetOut(&out)
	cmd.SetErr(&bytes.Buffer{})
	err := cmd.Execute()
	return out.String(), err
}

// TestInstallAndUninstallFlags: what needs no hub (validation, --dry-run)
// and errors that name the flag to fix.
func TestInstallAndUninstallFlags(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "none.kubeconfig")
	for _, tc := range []struct {
		args    []string
		wantErr string
		wantOut []string
		notOut  []string
	}{
		{args: []string{"install", "--timeout", "0"}, wantErr: "--timeout 0s must be positive (or pass --wait=false)"},
		{args: []string{"install", "--image", "Not An Image", "--dry-run"}, wantErr: `--image "Not An Image" is not an image reference`},
		{args: []string{"install", "extra"}, wantErr: `unknown command "extra"`},
		{args: []string{"install", "--hub-kubeconfig", missing}, wantErr: "loading the hub kubeconfig " + missing},
		{args: []string{"install", "--kubeconfig", missing}, wantErr: "loading the hub kubeconfig " + missing},
		{args: []string{"install", "--dry-run", "--image", "registry.example.com/shepherd:v1"},
			wantOut: []string{"kind: Namespace", "kind: CustomResourceDefinition", "image: registry.example.com/shepherd:v1", "kind: ValidatingWebhookConfiguration"},
			notOut:  []string{"ghcr.io/shepherd-io/shepherd-controller-manager:latest"}},
		{args: []string{"install", "--dry-run"}, wantOut: []string{"image: ghcr.io/shepherd-io/shepherd-controller-manager:latest"}},
		{args: []string{"uninstall", "--timeout", "-1s"}, wantErr: "--timeout -1s must be positive"},
		{args: []string{"uninstall", "--hub-kubeconfig", missing}, wantErr: "loading the hub kubeconfig " + missing},
		{args: []string{"uninstall", "--dry-run"},
			wantOut: []string{"would delete ValidatingWebhookConfiguration shepherd-healthinterpreter\n", "would delete Deployment shepherd-system/shepherd-controller-manager",
				"would keep Namespace shepherd-system", "would keep CustomResourceDefinition works.work.shepherd.io"}},
		{args: []string{"uninstall", "--dry-run", "--delete-crds", "--delete-namespace"},
			wantOut: []string{"would delete CustomResourceDefinition works.work.shepherd.io", "would delete Namespace shepherd-system\n"},
			notOut:  []string{"would keep"}},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			out, err := runCLI(tc.args...)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.wantOut {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q", w)
				}
			}
			for _, w := range tc.notOut {
				if strings.Contains(out, w) {
					t.Errorf("output has %q", w)
				}
			}
		})
	}
}

// deploymentArgs are the args of the first container of Deployment name
// among objs.
func deploymentArgs(t *testing.T, objs []*unstructured.Unstructured, name string) []string {
	t.Helper()
	for _, o := range objs {
		if o.GetKind() == "Deployment" && o.GetName() == name {
			containers, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
			args, _, _ := unstructured.NestedStringSlice(containers[0].(map[string]any), "args")
			return args
		}
	}
	t.Fatalf("no Deployment %s", name)
	return nil
}

// TestDeploymentArgsAreControllerManagerFlags: the Deployment of
// config/manager passes the controller manager (its image's entrypoint)
// only flags `shepherd controller-manager` accepts, and the webhook's DNS
// name is the Service's.
func TestDeploymentArgsAreControllerManagerFlags(t *testing.T) {
	objs, err := install.Manifests("")
	if err != nil {
		t.Fatal(err)
	}
	args := deploymentArgs(t, objs, install.Deployment)
	cmd := component.NewControllerManagerCommand()
	if err := cmd.ParseFlags(args); err != nil || len(cmd.Flags().Args()) > 0 {
		t.Fatalf("controller-manager refuses the Deployment's args %v: %v (positional: %q)", args, err, cmd.Flags().Args())
	}
	for flag, want := range map[string]string{
		"leader-elect":          "true",
		"leader-elect-identity": "$(POD_NAME)",
		"webhook-port":          "9443",
		"webhook-dns-name":      "[shepherd-webhook.shepherd-system.svc]",
		"namespace":             install.Namespace,
	} {
		if got := cmd.Flags().Lookup(flag).Value.String(); got != want {
			t.Errorf("--%s = %s, want %s", flag, got, want)
		}
	}
	if !slices.Contains(args, "--health-probe-bind-address=:8081") || !slices.Contains(args, "--metrics-bind-address=:8080") {
		t.Errorf("args %v: want probes on :8081 and metrics on :8080", args)
	}
}

// TestAgentDeploymentArgsAreAgentFlags: the Deployment of config/agent
// passes the agent (its image's entrypoint) only flags `shepherd agent`
// accepts.
func TestAgentDeploymentArgsAreAgentFlags(t *testing.T) {
	objs, err := install.AgentManifests("edge-1", "", []byte("kubeconfig"))
	if err != nil {
		t.Fatal(err)
	}
	args := deploymentArgs(t, objs, install.AgentDeployment)
	cmd := component.NewAgentCommand()
	if err := cmd.ParseFlags(args); err != nil || len(cmd.Flags().Args()) > 0 {
		t.Fatalf("agent refuses the Deployment's args %v: %v (positional: %q)", args, err, cmd.Flags().Args())
	}
	if got := cmd.Flags().Lookup("cluster").Value.String(); got != "$(CLUSTER_NAME)" {
		t.Errorf("--cluster = %s", got)
	}
}

// TestInstallAndUninstallAgainstAHub runs the commands against a real hub
// (which runs no pods: the Deployment never becomes Available there).
func TestInstallAndUninstallAgainstAHub(t *testing.T) {
	testenv.Heavy(t)
	// Parallel beside the restart test (see inProcess).
	t.Parallel()
	inProcess.Lock()
	t.Cleanup(inProcess.Unlock)
	hub := membershiptest.StartHub(t)
	kc := hub.ControlPlane.KubeconfigPath()

	out, err := runCLI("install", "--kubeconfig", kc, "--wait=false", "--image", "registry.example.com/shepherd:v1")
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"Namespace shepherd-system applied", "ClusterRole shepherd-controller-manager applied", "Shepherd is installed"} {
		if !strings.Contains(out, w) {
			t.Errorf("install output lacks %q:\n%s", w, out)
		}
	}
	c := membershiptest.HubClient(t, hub)
	d := &appsv1.Deployment{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: install.Namespace, Name: install.Deployment}, d); err != nil {
		t.Fatal(err)
	}
	if got := d.Spec.Template.Spec.Containers[0].Image; got != "registry.example.com/shepherd:v1" {
		t.Errorf("image %s, want --image's", got)
	}

	// Again, waiting: the CRDs are Established, the Deployment is not.
	// The timeout leaves room for the CRD checks on a busy machine.
	_, err = runCLI("install", "--hub-kubeconfig", kc, "--timeout", "10s")
	if err == nil || !strings.Contains(err.Error(), "the Deployment shepherd-system/shepherd-controller-manager is not Available") ||
		!strings.Contains(err.Error(), "--wait=false") {
		t.Fatalf("install --timeout 10s on a hub without pods: err = %v, want the Deployment not Available", err)
	}

	rb := &workv1alpha1.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web-deployment"},
		Spec: workv1alpha1.BindingSpec{Resource: workv1alpha1.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "default", Name: "web", UID: "uid-web"}}}
	if err := c.Create(context.Background(), rb); err != nil {
		t.Fatal(err)
	}
	_, err = runCLI("uninstall", "--kubeconfig", kc)
	if err == nil || !strings.Contains(err.Error(), "refusing to uninstall: 1 ResourceBindings and 0 ClusterResourceBindings exist") {
		t.Fatalf("uninstall with a binding: err = %v, want a refusal", err)
	}
	if err := c.Delete(context.Background(), rb); err != nil {
		t.Fatal(err)
	}
	out, err = runCLI("uninstall", "--kubeconfig", kc)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"Deployment shepherd-system/shepherd-controller-manager deleted", "kept Namespace shepherd-system"} {
		if !strings.Contains(out, w) {
			t.Errorf("uninstall output lacks %q:\n%s", w, out)
		}
	}
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(d), &appsv1.Deployment{}); !apierrors.IsNotFound(err) {
		t.Errorf("the Deployment is still there: %v", err)
	}
}
