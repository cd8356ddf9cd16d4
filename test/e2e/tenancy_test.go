package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestPodSecurityFollowsTheHubNamespace: a tenant whose hub namespace
// enforces the restricted Pod Security level propagates a hostPID pod
// mounting the host's root. The member namespace Shepherd creates carries
// the hub's label, so the member refuses the pod; a member namespace that
// someone else created without it is not written into at all.
func TestPodSecurityFollowsTheHubNamespace(t *testing.T) {
	const ns = "e2e-psa"
	ctx := context.Background()
	// member2's team created the namespace already, enforcing nothing.
	if err := memberCl["member2"].Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: map[string]string{"owner": "member-team"}}}); err != nil {
		t.Fatal(err)
	}
	applyYAML(t, `apiVersion: v1
kind: Namespace
metadata:
  name: e2e-psa
  labels:
    pod-security.kubernetes.io/enforce: restricted
    pod-security.kubernetes.io/warn: restricted
---
apiVersion: v1
kind: Pod
metadata: {name: rooted, namespace: e2e-psa}
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
`+lifecyclePolicyYAML(ns, "rooted", "Pod", "rooted", "", "member1", "member2"))

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
	eventually(t, "both members refuse", func() error {
		rb, err := binding(ns, "rooted", "Pod")
		if err != nil {
			return err
		}
		m1, m2 := aggregated(rb, "member1"), aggregated(rb, "member2")
		if m1 == nil || m1.Applied || !strings.Contains(m1.AppliedMessage, "violates PodSecurity") {
			return fmt.Errorf("member1: %+v", m1)
		}
		if m2 == nil || m2.Applied || m2.AppliedReason != "NamespacePolicy" || !strings.Contains(m2.AppliedMessage, `enforces Pod Security level "none", weaker than "restricted"`) {
			return fmt.Errorf("member2: %+v", m2)
		}
		return nil
	})
	for _, c := range []string{"member1", "member2"} {
		if err := goneFromMember(c, client.ObjectKey{Namespace: ns, Name: "rooted"}, &corev1.Pod{}); err != nil {
			t.Errorf("the hostPID pod runs in %s: %v", c, err)
		}
	}
	n := &corev1.Namespace{}
	if err := inMember("member2", client.ObjectKey{Name: ns}, n); err != nil {
		t.Fatal(err)
	}
	if _, ok := n.Labels["pod-security.kubernetes.io/enforce"]; ok || n.Labels["owner"] != "member-team" {
		t.Errorf("member2's own namespace was relabelled: %v", n.Labels)
	}
}
