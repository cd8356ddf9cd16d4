package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestDependenciesFollowTheWorkload: with propagateDeps, the ConfigMap and
// Secret a Deployment mounts land in every member it runs on, follow an
// edit on the hub, never overwrite the member team's object of the same
// name, and leave the members when the workload does.
func TestDependenciesFollowTheWorkload(t *testing.T) {
	const ns = "e2e-deps"
	createNamespace(t, ns)
	// member2's team already has a ConfigMap "settings": it is not ours.
	team := memberConfigMap(t, "member2", ns, "settings")
	deployment := strings.Replace(deploymentYAML(ns, "web", 2), "      containers:\n", `      volumes:
      - {name: settings, configMap: {name: settings}}
      - {name: tls, secret: {secretName: web-tls}}
      containers:
`, 1)
	applyYAML(t, fmt.Sprintf(`apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: %[1]s}
data: {mode: hub}
---
apiVersion: v1
kind: Secret
metadata: {name: web-tls, namespace: %[1]s}
stringData: {tls.key: not-a-real-key}
---
`, ns)+deployment+"---\n"+lifecyclePolicyYAML(ns, "web", "Deployment", "web", "propagateDeps: true\n", "member1", "member2"))

	settings := client.ObjectKey{Namespace: ns, Name: "settings"}
	tls := client.ObjectKey{Namespace: ns, Name: "web-tls"}
	eventually(t, "the ConfigMap and the Secret in member1", func() error {
		cm := &corev1.ConfigMap{}
		if err := inMember("member1", settings, cm); err != nil {
			return err
		}
		if cm.Data["mode"] != "hub" {
			return fmt.Errorf("member1's ConfigMap: %v", cm.Data)
		}
		return inMember("member1", tls, &corev1.Secret{})
	})
	eventually(t, "the Secret in member2", func() error { return inMember("member2", tls, &corev1.Secret{}) })
	eventually(t, "the workload runs in both", func() error {
		for _, m := range []string{"member1", "member2"} {
			if err := inMember(m, client.ObjectKey{Namespace: ns, Name: "web"}, &appsv1.Deployment{}); err != nil {
				return err
			}
		}
		return nil
	})
	// The attached binding shows who requires the ConfigMap.
	eventually(t, "the ConfigMap's binding lists its dependent", func() error {
		b, err := binding(ns, "settings", "ConfigMap")
		if err != nil {
			return err
		}
		if len(b.Spec.RequiredBy) != 1 || b.Spec.RequiredBy[0].Name != "web-deployment" || b.Spec.PolicyRef != nil {
			return fmt.Errorf("spec %+v", b.Spec)
		}
		return nil
	})
	if err := sameConfigMap("member2", team); err != nil {
		t.Fatal(err)
	}

	// An edit on the hub follows.
	applyYAML(t, fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: %s}\ndata: {mode: edited}\n", ns))
	eventually(t, "the edit reaches member1", func() error {
		cm := &corev1.ConfigMap{}
		if err := inMember("member1", settings, cm); err != nil {
			return err
		}
		if cm.Data["mode"] != "edited" {
			return fmt.Errorf("member1's ConfigMap: %v", cm.Data)
		}
		return nil
	})
	if err := sameConfigMap("member2", team); err != nil {
		t.Fatal(err)
	}

	// The workload goes: so do its dependencies, except the team's object.
	if err := hub.Delete(context.Background(), &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"}}); err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"member1", "member2"} {
		eventually(t, "the Secret leaves "+m, func() error { return goneFromMember(m, tls, &corev1.Secret{}) })
	}
	eventually(t, "the ConfigMap leaves member1", func() error { return goneFromMember("member1", settings, &corev1.ConfigMap{}) })
	eventually(t, "the attached bindings are gone", func() error {
		if _, err := binding(ns, "settings", "ConfigMap"); err == nil {
			return fmt.Errorf("the ConfigMap's binding is still there")
		}
		return nil
	})
	if err := sameConfigMap("member2", team); err != nil {
		t.Fatal(err)
	}
}
