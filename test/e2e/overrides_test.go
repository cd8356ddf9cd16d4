package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/cli"
	"github.com/shepherd-io/shepherd/pkg/names"
)

// TestOverridesRenderEachCluster: member1 (aws, us-east-1) and member2
// (gcp, europe-west1) get their own rendering of one Deployment: the EU
// registry mirror on member2, one replica and a label on member1. A patch
// that cannot apply to member2 holds back member2's Work only, with an
// event naming the policy; fixing it lets member2 follow.
func TestOverridesRenderEachCluster(t *testing.T) {
	const ns = "e2e-overrides"
	createNamespace(t, ns)
	perRegion := strings.ReplaceAll(strings.ReplaceAll(readExample(t, "overrides", "per-region.yaml"),
		"namespace: default", "namespace: "+ns), "name: eu-registry-mirror", "name: e2e-eu-registry-mirror")
	// The fleet-wide policy of the example selects every Deployment; this
	// test narrows it to its namespace's.
	perRegion = strings.Replace(perRegion, "  - {apiVersion: apps/v1, kind: Deployment}\n", "  - {apiVersion: apps/v1, kind: Deployment, namespace: "+ns+"}\n", 1)
	applyYAML(t, perRegion+"---\n"+deploymentYAML(ns, "shop", 3)+"---\n"+
		lifecyclePolicyYAML(ns, "shop", "Deployment", "shop", "", "member1", "member2"))
	key := client.ObjectKey{Namespace: ns, Name: "shop"}
	eventually(t, "each member runs its rendering", func() error {
		us, eu := &appsv1.Deployment{}, &appsv1.Deployment{}
		if err := inMember("member1", key, us); err != nil {
			return err
		}
		if err := inMember("member2", key, eu); err != nil {
			return err
		}
		if img := eu.Spec.Template.Spec.Containers[0].Image; img != "mirror.eu.example.com/nginx:1.27" {
			return fmt.Errorf("member2 image %s", img)
		}
		if img := us.Spec.Template.Spec.Containers[0].Image; img != "nginx:1.27" {
			return fmt.Errorf("member1 image %s", img)
		}
		if us.Spec.Replicas == nil || *us.Spec.Replicas != 1 || us.Labels["shop.example.com/market"] != "us" {
			return fmt.Errorf("member1: replicas %v labels %v", us.Spec.Replicas, us.Labels)
		}
		if *eu.Spec.Replicas != 3 {
			return fmt.Errorf("member2 replicas %d", *eu.Spec.Replicas)
		}
		return nil
	})
	// The Works say which rules were applied.
	w := &workv1alpha1.Work{}
	if err := hub.Get(context.Background(), client.ObjectKey{Namespace: names.ExecutionNamespace("member1"),
		Name: names.WorkName(ns, "shop-deployment")}, w); err != nil {
		t.Fatal(err)
	}
	if got := w.Annotations[workv1alpha1.AnnotationAppliedOverrides]; got != "OverridePolicy "+ns+"/shop-us rule 0" {
		t.Errorf("member1's Work: applied overrides %q", got)
	}
	// shepherd get rendered shows what member2 is sent, and why.
	out := shepherd(t, "get", "rendered", "deployment/shop", "-n", ns, "--cluster", "member2")
	for _, want := range []string{"# cluster: member2", "# overrides: ClusterOverridePolicy e2e-eu-registry-mirror rule 0", "image: mirror.eu.example.com/nginx:1.27"} {
		if !strings.Contains(out, want) {
			t.Errorf("shepherd get rendered: no %q in\n%s", want, out)
		}
	}

	// A patch that does not apply to member2: its Work stays as it was,
	// member1 follows the next template edit.
	applyYAML(t, fmt.Sprintf(`apiVersion: policy.shepherd.io/v1alpha1
kind: OverridePolicy
metadata: {name: broken, namespace: %s}
spec:
  resourceSelectors:
  - {apiVersion: apps/v1, kind: Deployment, name: shop}
  overrideRules:
  - targetCluster: {clusterNames: [member2]}
    overriders:
      plaintext:
      - {path: /spec/no/such/field, operator: replace, value: 1}
`, ns))
	applyYAML(t, strings.ReplaceAll(deploymentYAML(ns, "shop", 3), "nginx:1.27", "nginx:1.28"))
	eventually(t, "member1 follows the edit", func() error {
		d := &appsv1.Deployment{}
		if err := inMember("member1", key, d); err != nil {
			return err
		}
		if img := d.Spec.Template.Spec.Containers[0].Image; img != "nginx:1.28" {
			return fmt.Errorf("member1 image %s", img)
		}
		return nil
	})
	eventually(t, "an OverrideFailed event names the policy", func() error {
		var events eventsv1.EventList
		if err := hub.List(context.Background(), &events, client.InNamespace(ns)); err != nil {
			return err
		}
		for _, e := range events.Items {
			if e.Reason == "OverrideFailed" && strings.Contains(e.Note, "OverridePolicy "+ns+"/broken rule 0 plaintext[0]") {
				return nil
			}
		}
		return fmt.Errorf("no OverrideFailed event among %d", len(events.Items))
	})
	d := &appsv1.Deployment{}
	if err := inMember("member2", key, d); err != nil {
		t.Fatal(err)
	}
	if img := d.Spec.Template.Spec.Containers[0].Image; img != "mirror.eu.example.com/nginx:1.27" {
		t.Errorf("member2 changed although its override failed: %s", img)
	}
	// Fixing the policy lets member2 follow.
	if err := hub.Delete(context.Background(), overridePolicy(ns, "broken")); err != nil {
		t.Fatal(err)
	}
	eventually(t, "member2 follows once the broken policy is gone", func() error {
		d := &appsv1.Deployment{}
		if err := inMember("member2", key, d); err != nil {
			return err
		}
		if img := d.Spec.Template.Spec.Containers[0].Image; img != "mirror.eu.example.com/nginx:1.28" {
			return fmt.Errorf("member2 image %s", img)
		}
		return nil
	})
}

// readExample returns a file of examples/<dir>.
func readExample(t *testing.T, dir, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "examples", dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func overridePolicy(ns, name string) *policyv1alpha1.OverridePolicy {
	return &policyv1alpha1.OverridePolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
}

// shepherd runs the CLI against the hub and returns its output.
func shepherd(t *testing.T, args ...string) string {
	t.Helper()
	cmd := cli.NewRootCommand()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs(append(args, "--hub-kubeconfig", fleet.Hub.KubeconfigPath()))
	if err := cmd.Execute(); err != nil {
		t.Fatalf("shepherd %v: %v\n%s", args, err, out.String())
	}
	return out.String()
}
