package integration

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/controllerdeps"
	"github.com/shepherd-io/shepherd/pkg/controllers/detector"
	"github.com/shepherd-io/shepherd/pkg/controllers/scheduling"
	"github.com/shepherd-io/shepherd/pkg/scheme"
	"github.com/shepherd-io/shepherd/test/testenv"
)

// TestWorkloadAffinity runs the detector and the scheduler on the hub:
// two Deployments of one affinity group end up on the same cluster, two of
// one anti-affinity group on different clusters, whatever cluster each
// picks among the three eligible ones (one cluster each, created together).
func TestWorkloadAffinity(t *testing.T) {
	suite.Hub(t)
	const ns = "workload-affinity"
	ctx := context.Background()
	c, err := client.New(hub.Config, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	clusters := []string{"wa-a", "wa-b", "wa-c"}
	for _, name := range clusters {
		if err := testenv.CreateReadyCluster(ctx, c, name, map[string]string{"workload-affinity": "test"}); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		_ = c.DeleteAllOf(ctx, &appsv1.Deployment{}, client.InNamespace(ns))
		_ = c.DeleteAllOf(ctx, &policyv1alpha1.PropagationPolicy{}, client.InNamespace(ns))
		_ = c.DeleteAllOf(ctx, &workv1alpha1.ResourceBinding{}, client.InNamespace(ns))
		for _, name := range clusters {
			_ = c.Delete(ctx, &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name}})
		}
	})
	m, err := hub.StartManager(func(mgr ctrl.Manager) error {
		if err := detector.Setup(controllerdeps.Deps{Manager: mgr}, detector.Options{UnknownKindRetry: time.Second}); err != nil {
			return err
		}
		return scheduling.Setup(controllerdeps.Deps{Manager: mgr}, scheduling.Options{})
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Stop() })

	one := ptr.To[int32](1)
	for _, p := range []struct {
		name, key string
		terms     policyv1alpha1.WorkloadAffinity
	}{
		{"together", "example.com/shop", policyv1alpha1.WorkloadAffinity{Affinity: &policyv1alpha1.WorkloadAffinityTerm{GroupByLabelKey: "example.com/shop"}}},
		{"apart", "example.com/ha-pair", policyv1alpha1.WorkloadAffinity{AntiAffinity: &policyv1alpha1.WorkloadAffinityTerm{GroupByLabelKey: "example.com/ha-pair"}}},
	} {
		pol := &policyv1alpha1.PropagationPolicy{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: p.name},
			Spec: policyv1alpha1.PropagationSpec{
				ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment",
					LabelSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: p.key, Operator: metav1.LabelSelectorOpExists}}}}},
				Placement: policyv1alpha1.Placement{
					ClusterAffinity:   &policyv1alpha1.ClusterAffinity{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"workload-affinity": "test"}}},
					SpreadConstraints: []policyv1alpha1.SpreadConstraint{{SpreadByField: policyv1alpha1.SpreadByFieldCluster, MinGroups: 1, MaxGroups: one}},
					WorkloadAffinity:  &p.terms,
				},
			},
		}
		if err := c.Create(ctx, pol); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []struct{ name, key, value string }{
		{"cart", "example.com/shop", "web"}, {"checkout", "example.com/shop", "web"},
		{"ingest-1", "example.com/ha-pair", "ingest"}, {"ingest-2", "example.com/ha-pair", "ingest"},
	} {
		if err := c.Create(ctx, deployment(ns, d.name, map[string]string{d.key: d.value})); err != nil {
			t.Fatal(err)
		}
	}

	placed := func(name string) ([]string, error) {
		b := &workv1alpha1.ResourceBinding{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name + "-deployment"}, b); err != nil {
			return nil, err
		}
		var out []string
		for _, t := range b.Spec.Clusters {
			out = append(out, t.Name)
		}
		if len(out) == 0 {
			return nil, fmt.Errorf("%s not placed yet", name)
		}
		return out, nil
	}
	testenv.Eventually(t, time.Minute, "the affinity group on one cluster, the anti-affinity group apart", func() error {
		got := map[string][]string{}
		for _, name := range []string{"cart", "checkout", "ingest-1", "ingest-2"} {
			cs, err := placed(name)
			if err != nil {
				return err
			}
			got[name] = cs
		}
		if !slices.Equal(got["cart"], got["checkout"]) {
			return fmt.Errorf("affinity group apart: cart on %v, checkout on %v", got["cart"], got["checkout"])
		}
		if slices.Equal(got["ingest-1"], got["ingest-2"]) {
			return fmt.Errorf("anti-affinity group together: both on %v", got["ingest-1"])
		}
		return nil
	})
	// The binding carries the groups as Karmada writes them.
	b := &workv1alpha1.ResourceBinding{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "cart-deployment"}, b); err != nil {
		t.Fatal(err)
	}
	if g := b.Spec.WorkloadAffinityGroups; g == nil || g.AffinityGroup != "example.com/shop=web" || g.AntiAffinityGroup != "" {
		t.Errorf("cart's spec.workloadAffinityGroups = %+v, want affinityGroup example.com/shop=web", g)
	}
}

func deployment(ns, name string, labels map[string]string) *appsv1.Deployment {
	sel := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: sel},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: sel},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "nginx"}}},
			},
		},
	}
}
