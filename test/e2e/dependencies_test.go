package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
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

// TestRetainedReplicasAreNotFought: a template labelled retain-replicas
// keeps the replica count a member's autoscaler set (written through the
// scale subresource, as an HPA does), across a template edit that
// re-applies the Work; without the label the hub's count wins.
func TestRetainedReplicasAreNotFought(t *testing.T) {
	const ns = "e2e-retain"
	createNamespace(t, ns)
	retained := strings.Replace(deploymentYAML(ns, "scaled", 2), "  namespace: "+ns+"\n",
		"  namespace: "+ns+"\n  labels: {work.shepherd.io/retain-replicas: \"true\"}\n", 1)
	applyYAML(t, retained+"---\n"+deploymentYAML(ns, "fixed", 2)+"---\n"+
		lifecyclePolicyYAML(ns, "scaled", "Deployment", "scaled", "", "member1")+"---\n"+
		lifecyclePolicyYAML(ns, "fixed", "Deployment", "fixed", "", "member1"))
	for _, name := range []string{"scaled", "fixed"} {
		key := client.ObjectKey{Namespace: ns, Name: name}
		eventually(t, name+" in member1", func() error { return inMember("member1", key, &appsv1.Deployment{}) })
		// The member's autoscaler scales it to 5, as an HPA does: through
		// the scale subresource, again when the Deployment changed meanwhile.
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			d := &appsv1.Deployment{}
			if err := inMember("member1", key, d); err != nil {
				return err
			}
			scale := &autoscalingv1.Scale{}
			if err := memberCl["member1"].SubResource("scale").Get(context.Background(), d, scale); err != nil {
				return err
			}
			scale.Spec.Replicas = 5
			return memberCl["member1"].SubResource("scale").Update(context.Background(), d,
				&client.SubResourceUpdateOptions{SubResourceBody: scale, UpdateOptions: client.UpdateOptions{FieldManager: "horizontal-pod-autoscaler"}})
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	// A template edit re-applies both Works.
	applyYAML(t, strings.ReplaceAll(retained, "nginx:1.27", "nginx:1.28")+"---\n"+strings.ReplaceAll(deploymentYAML(ns, "fixed", 2), "nginx:1.27", "nginx:1.28"))
	for name, want := range map[string]int32{"scaled": 5, "fixed": 2} {
		eventually(t, fmt.Sprintf("%s re-applied with %d replicas", name, want), func() error {
			d := &appsv1.Deployment{}
			if err := inMember("member1", client.ObjectKey{Namespace: ns, Name: name}, d); err != nil {
				return err
			}
			if img := d.Spec.Template.Spec.Containers[0].Image; img != "nginx:1.28" {
				return fmt.Errorf("image %s not re-applied yet", img)
			}
			if d.Spec.Replicas == nil || *d.Spec.Replicas != want {
				return fmt.Errorf("replicas %v, want %d", d.Spec.Replicas, want)
			}
			return nil
		})
	}
}
