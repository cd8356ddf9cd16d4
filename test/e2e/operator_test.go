package e2e

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/names"
	"github.com/shepherd-io/shepherd/test/testenv"
)

// The operator test installs Argo CD (testdata/argo-cd: its published
// install manifest, unchanged) in two members, in the namespace the
// manifest expects.
const (
	operatorNS       = "argocd"
	operatorManifest = "testdata/argo-cd/install.yaml"
)

var operatorMembers = []string{"member1", "member2"}

// operatorPolicies: one ClusterPropagationPolicy for the manifest's
// cluster-scoped kinds and one PropagationPolicy for its namespaced ones
// (every kind of objs, in their order), each selecting by the label every
// object of the manifest carries.
func operatorPolicies(objs []*unstructured.Unstructured) string {
	var cluster, namespaced []string
	for _, o := range objs {
		sel := fmt.Sprintf("  - {apiVersion: %s, kind: %s, labelSelector: {matchLabels: {app.kubernetes.io/part-of: argocd}}}\n", o.GetAPIVersion(), o.GetKind())
		switch {
		case o.GetNamespace() == "" && !slices.Contains(cluster, sel):
			cluster = append(cluster, sel)
		case o.GetNamespace() != "" && !slices.Contains(namespaced, sel):
			namespaced = append(namespaced, sel)
		}
	}
	placement := `  placement:
    clusterAffinity: {clusterNames: [member1, member2]}
    replicaScheduling: {replicaSchedulingType: Duplicated}
`
	return `apiVersion: policy.shepherd.io/v1alpha1
kind: ClusterPropagationPolicy
metadata: {name: e2e-argocd-cluster}
spec:
  resourceSelectors:
` + strings.Join(cluster, "") + placement + `---
apiVersion: policy.shepherd.io/v1alpha1
kind: PropagationPolicy
metadata: {name: argocd, namespace: ` + operatorNS + `}
spec:
  resourceSelectors:
` + strings.Join(namespaced, "") + placement
}

// operatorObjects decodes the manifest, placing its namespaced objects in
// operatorNS.
func operatorObjects(t *testing.T) []*unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(operatorManifest)
	if err != nil {
		t.Fatal(err)
	}
	objs, err := testenv.DecodeYAML(data)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		if !clusterScopedKinds[o.GetKind()] {
			o.SetNamespace(operatorNS)
		}
	}
	return objs
}

var clusterScopedKinds = map[string]bool{"CustomResourceDefinition": true, "ClusterRole": true, "ClusterRoleBinding": true}

// operatorBindingApplied checks that the binding of template o is placed on
// both members and says every Work is applied.
func operatorBindingApplied(o *unstructured.Unstructured) error {
	ctx := context.Background()
	var conds []metav1.Condition
	var clusters []workv1alpha1.TargetCluster
	if o.GetNamespace() == "" {
		b := &workv1alpha1.ClusterResourceBinding{}
		if err := hub.Get(ctx, client.ObjectKey{Name: names.BindingName(o.GetKind(), o.GetName())}, b); err != nil {
			return err
		}
		conds, clusters = b.Status.Conditions, b.Spec.Clusters
	} else {
		b, err := binding(o.GetNamespace(), o.GetName(), o.GetKind())
		if err != nil {
			return err
		}
		conds, clusters = b.Status.Conditions, b.Spec.Clusters
	}
	got := make([]string, 0, len(clusters))
	for _, c := range clusters {
		got = append(got, c.Name)
	}
	slices.Sort(got)
	if !slices.Equal(got, operatorMembers) {
		return fmt.Errorf("placed on %v, want %v", got, operatorMembers)
	}
	if c := meta.FindStatusCondition(conds, workv1alpha1.ConditionFullyApplied); c == nil || c.Status != metav1.ConditionTrue {
		return fmt.Errorf("FullyApplied %+v", c)
	}
	return nil
}

// operatorCopy reads o's copy in cluster.
func operatorCopy(cluster string, o *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	cp := &unstructured.Unstructured{}
	cp.SetGroupVersionKind(o.GroupVersionKind())
	return cp, inMember(cluster, client.ObjectKeyFromObject(o), cp)
}

// workloadReady checks that a Deployment's or StatefulSet's copy runs all
// its replicas, Ready, for its current spec.
func workloadReady(cp *unstructured.Unstructured) error {
	want, found, _ := unstructured.NestedInt64(cp.Object, "spec", "replicas")
	if !found {
		want = 1
	}
	ready, _, _ := unstructured.NestedInt64(cp.Object, "status", "readyReplicas")
	observed, _, _ := unstructured.NestedInt64(cp.Object, "status", "observedGeneration")
	if observed < cp.GetGeneration() || ready != want {
		return fmt.Errorf("%d of %d replicas ready (generation %d observed %d)", ready, want, cp.GetGeneration(), observed)
	}
	return nil
}

// TestOperatorInstall propagates a real operator's published install
// manifest (CRDs, cluster and namespaced RBAC, Secrets, ConfigMaps,
// Services, NetworkPolicies, Deployments, a StatefulSet) to two members
// with one ClusterPropagationPolicy and one PropagationPolicy: every object
// arrives, the workloads become ready, an edit reaches both members, and
// deleting the templates leaves nothing of the operator behind. The local
// fleet joins its members with --allow-rbac-propagation; without it the
// ClusterRoles (rules on every resource) would be refused.
func TestOperatorInstall(t *testing.T) {
	ctx := context.Background()
	objs := operatorObjects(t)
	if len(objs) != 59 {
		t.Fatalf("the manifest holds %d objects, want 59", len(objs))
	}
	createNamespace(t, operatorNS)
	policies, err := testenv.DecodeYAML([]byte(operatorPolicies(objs)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, o := range slices.Backward(append(policies, objs...)) {
			_ = hub.Delete(ctx, o)
		}
	})
	applyYAML(t, operatorPolicies(objs))
	// In the manifest's order (CRDs first), as kubectl apply would.
	for _, o := range objs {
		if err := hub.Apply(ctx, client.ApplyConfigurationFromUnstructured(o.DeepCopy()), client.FieldOwner("e2e"), client.ForceOwnership); err != nil {
			t.Fatalf("applying %s %s: %v", o.GetKind(), o.GetName(), err)
		}
	}

	for _, o := range objs {
		what := fmt.Sprintf("%s %s", o.GetKind(), client.ObjectKeyFromObject(o))
		eventually(t, what+" applied to both members", func() error { return operatorBindingApplied(o) })
		for _, c := range operatorMembers {
			eventually(t, what+" in "+c, func() error {
				cp, err := operatorCopy(c, o)
				if err != nil {
					return err
				}
				if k := o.GetKind(); k == "Deployment" || k == "StatefulSet" {
					return workloadReady(cp)
				}
				return nil
			})
		}
	}

	t.Run("an edit reaches both members", func(t *testing.T) {
		cm := &corev1.ConfigMap{}
		if err := hub.Get(ctx, client.ObjectKey{Namespace: operatorNS, Name: "argocd-cm"}, cm); err != nil {
			t.Fatal(err)
		}
		if cm.Data == nil {
			cm.Data = map[string]string{}
		}
		cm.Data["timeout.reconciliation"] = "300s"
		if err := hub.Update(ctx, cm); err != nil {
			t.Fatal(err)
		}
		for _, c := range operatorMembers {
			eventually(t, "the edit in "+c, func() error {
				got := &corev1.ConfigMap{}
				if err := inMember(c, client.ObjectKeyFromObject(cm), got); err != nil {
					return err
				}
				if v := got.Data["timeout.reconciliation"]; v != "300s" {
					return fmt.Errorf("timeout.reconciliation %q", v)
				}
				return nil
			})
		}
	})

	t.Run("deleting the templates leaves nothing behind", func(t *testing.T) {
		for _, o := range slices.Backward(objs) {
			if err := hub.Delete(ctx, o); err != nil && !apierrors.IsNotFound(err) {
				t.Fatalf("deleting %s %s: %v", o.GetKind(), o.GetName(), err)
			}
		}
		for _, c := range operatorMembers {
			eventually(t, "the operator gone from "+c, func() error {
				var left []error
				for _, o := range objs {
					if _, err := operatorCopy(c, o); !apierrors.IsNotFound(err) {
						left = append(left, fmt.Errorf("%s %s: %v", o.GetKind(), client.ObjectKeyFromObject(o), err))
					}
				}
				var pods corev1.PodList
				if err := memberCl[c].List(ctx, &pods, client.InNamespace(operatorNS)); err != nil {
					return err
				}
				if len(pods.Items) > 0 {
					left = append(left, fmt.Errorf("%d pods", len(pods.Items)))
				}
				return errors.Join(left...)
			})
		}
	})
}
