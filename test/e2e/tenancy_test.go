package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
)

// TestPodSecurityFollowsTheHubNamespace: a tenant whose hub namespace
// enforces the restricted Pod Security level propagates a Deployment of
// hostPID pods mounting the host's root. The member namespace Shepherd
// creates carries the hub's label, so the member refuses the pods; a
// member namespace that someone else created without it is not written
// into at all.
func TestPodSecurityFollowsTheHubNamespace(t *testing.T) {
	const ns = "e2e-psa"
	ctx := context.Background()
	// member2's team created the namespace already, enforcing nothing.
	if err := memberCl["member2"].Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: map[string]string{"owner": "member-team"}}}); err != nil {
		t.Fatal(err)
	}
	// The hub's own Pod Security admission only warns about a Deployment's
	// pod template; the pods would be created in the members.
	applyYAML(t, `apiVersion: v1
kind: Namespace
metadata:
  name: e2e-psa
  labels:
    pod-security.kubernetes.io/enforce: restricted
    pod-security.kubernetes.io/warn: restricted
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: rooted, namespace: e2e-psa}
spec:
  replicas: 1
  selector: {matchLabels: {app: rooted}}
  template:
    metadata: {labels: {app: rooted}}
    spec:
      hostPID: true
      containers:
      - name: shell
        image: busybox
        command: [sleep, "3600"]
        volumeMounts: [{name: host, mountPath: /host}]
      volumes:
      - name: host
        hostPath: {path: /}
---
`+lifecyclePolicyYAML(ns, "rooted", "Deployment", "rooted", "", "member1", "member2"))

	eventually(t, "member1's namespace carries the hub's Pod Security labels", func() error {
		n := &corev1.Namespace{}
		if err := inMember("member1", client.ObjectKey{Name: ns}, n); err != nil {
			return err
		}
		if n.Labels["pod-security.kubernetes.io/enforce"] != "restricted" || n.Labels["pod-security.kubernetes.io/warn"] != "restricted" {
			return fmt.Errorf("labels %v", n.Labels)
		}
		return nil
	})
	eventually(t, "member1 refuses the pods", func() error {
		var rss appsv1.ReplicaSetList
		if err := memberCl["member1"].List(ctx, &rss, client.InNamespace(ns)); err != nil {
			return err
		}
		for _, rs := range rss.Items {
			for _, c := range rs.Status.Conditions {
				if c.Type == appsv1.ReplicaSetReplicaFailure && strings.Contains(c.Message, "violates PodSecurity") {
					return nil
				}
			}
		}
		return fmt.Errorf("no ReplicaSet reports the refusal among %d", len(rss.Items))
	})
	eventually(t, "member2's foreign namespace is not written into", func() error {
		rb, err := binding(ns, "rooted", "Deployment")
		if err != nil {
			return err
		}
		m2 := aggregated(rb, "member2")
		if m2 == nil || m2.Applied || m2.AppliedReason != "NamespacePolicy" || !strings.Contains(m2.AppliedMessage, `enforces Pod Security level "none", weaker than "restricted"`) {
			return fmt.Errorf("member2: %+v", m2)
		}
		return nil
	})
	for _, c := range []string{"member1", "member2"} {
		var pods corev1.PodList
		if err := memberCl[c].List(ctx, &pods, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
		if len(pods.Items) != 0 {
			t.Errorf("the hostPID pod runs in %s: %v", c, pods.Items[0].Name)
		}
	}
	if err := goneFromMember("member2", client.ObjectKey{Namespace: ns, Name: "rooted"}, &appsv1.Deployment{}); err != nil {
		t.Error(err)
	}
	n := &corev1.Namespace{}
	if err := inMember("member2", client.ObjectKey{Name: ns}, n); err != nil {
		t.Fatal(err)
	}
	if _, ok := n.Labels["pod-security.kubernetes.io/enforce"]; ok || n.Labels["owner"] != "member-team" {
		t.Errorf("member2's own namespace was relabelled: %v", n.Labels)
	}
}

// TestReplicaLimit: a Deployment asking for more replicas than a workload
// may have (equal weights would divide them without looking at capacity)
// is Unschedulable with the reason, and nothing reaches the members.
func TestReplicaLimit(t *testing.T) {
	const ns = "e2e-limit"
	createNamespace(t, ns)
	placement := "clusterAffinity:\n  clusterNames: [member1, member2]\nreplicaScheduling:\n  replicaSchedulingType: Divided\n  replicaDivisionPreference: Weighted\n"
	applyYAML(t, policyYAML(ns, "huge", "Deployment", "huge", placement)+"---\n"+deploymentYAML(ns, "huge", 2147483647))
	eventually(t, "Scheduled=False (replicaLimit)", func() error {
		rb, err := binding(ns, "huge", "Deployment")
		if err != nil {
			return err
		}
		c := meta.FindStatusCondition(rb.Status.Conditions, workv1alpha1.ConditionScheduled)
		if c == nil || c.Status != metav1.ConditionFalse || !strings.Contains(c.Message, "replicaLimit") {
			return fmt.Errorf("Scheduled %+v", c)
		}
		if len(rb.Spec.Clusters) != 0 {
			return fmt.Errorf("targets %+v", rb.Spec.Clusters)
		}
		return nil
	})
	works := &workv1alpha1.WorkList{}
	if err := hub.List(context.Background(), works, client.MatchingLabels{workv1alpha1.LabelBindingNamespace: ns}); err != nil {
		t.Fatal(err)
	}
	if len(works.Items) != 0 {
		t.Errorf("%d Works written for an over-limit workload", len(works.Items))
	}
	for _, c := range []string{"member1", "member2"} {
		if err := goneFromMember(c, client.ObjectKey{Namespace: ns, Name: "huge"}, &appsv1.Deployment{}); err != nil {
			t.Error(err)
		}
	}
}
