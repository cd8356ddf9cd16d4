package binding

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/overrides"
)

// ReasonOverrideFailed is the Warning event on a binding (and its template)
// when an override policy does not apply to one cluster's manifest: that
// cluster's Work is left as it was; the other clusters are not affected.
const ReasonOverrideFailed = "OverrideFailed"

// overridePolicies are the override policies that may apply to a template
// of namespace ns (every ClusterOverridePolicy; the OverridePolicies of ns).
type overridePolicies struct {
	cluster    []policyv1alpha1.ClusterOverridePolicy
	namespaced []policyv1alpha1.OverridePolicy
}

func (r *Reconciler[T]) overridePolicies(ctx context.Context, ns string) (*overridePolicies, error) {
	out := &overridePolicies{}
	cl := &policyv1alpha1.ClusterOverridePolicyList{}
	if err := r.client.List(ctx, cl); err != nil {
		return nil, err
	}
	out.cluster = cl.Items
	if ns != "" {
		nl := &policyv1alpha1.OverridePolicyList{}
		if err := r.client.List(ctx, nl, client.InNamespace(ns)); err != nil {
			return nil, err
		}
		out.namespaced = nl.Items
	}
	return out, nil
}

// render applies the override policies to a copy of manifest for cluster
// and returns it with the applied rules (AnnotationAppliedOverrides form).
// manifest itself is never changed: it may be shared between clusters.
func (r *Reconciler[T]) render(ctx context.Context, manifest *unstructured.Unstructured, cluster string, ps *overridePolicies) (*unstructured.Unstructured, string, error) {
	if len(ps.cluster) == 0 && len(ps.namespaced) == 0 {
		return manifest, "", nil
	}
	c := &clusterv1alpha1.Cluster{}
	if err := r.client.Get(ctx, client.ObjectKey{Name: cluster}, c); err != nil {
		return nil, "", fmt.Errorf("reading Cluster %s for its override policies: %w", cluster, err)
	}
	m := manifest.DeepCopy()
	applied, err := overrides.Apply(r.in, m, c, ps.cluster, ps.namespaced)
	if err != nil {
		return nil, "", err
	}
	parts := make([]string, len(applied))
	for i, a := range applied {
		parts[i] = fmt.Sprintf("%s rule %d", a.Policy, a.Rule)
	}
	return m, strings.Join(parts, "; "), nil
}
