package binding

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

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

// renderKey hashes what the Work of cluster is rendered from: desired (the
// Work as it would be without overrides: the template's manifest for the
// cluster and the Work's settings), and, when override policies may apply,
// what they read of the cluster (name, labels, provider, region, zone) and
// each policy's identity and generation. Rendering can be expensive (a
// policy may carry many operations on a large object), and a reconcile
// comes for many reasons that change none of this.
func (r *Reconciler[T]) renderKey(ctx context.Context, desired *unstructured.Unstructured, cluster string, ps *overridePolicies) (string, error) {
	h := sha256.New()
	data, err := json.Marshal(desired.Object)
	if err != nil {
		return "", err
	}
	h.Write(data)
	if len(ps.cluster)+len(ps.namespaced) > 0 {
		c := &clusterv1alpha1.Cluster{}
		if err := r.client.Get(ctx, client.ObjectKey{Name: cluster}, c); err != nil {
			return "", fmt.Errorf("reading Cluster %s for its override policies: %w", cluster, err)
		}
		data, err := json.Marshal([]any{c.Name, c.Labels, c.Spec.Provider, c.Spec.Region, c.Spec.Zone})
		if err != nil {
			return "", err
		}
		h.Write(data)
		for _, p := range ps.cluster {
			fmt.Fprintf(h, "\x00COP/%s/%s/%d", p.Name, p.UID, p.Generation)
		}
		for _, p := range ps.namespaced {
			fmt.Fprintf(h, "\x00OP/%s/%s/%s/%d", p.Namespace, p.Name, p.UID, p.Generation)
		}
	}
	return hex.EncodeToString(h.Sum(nil)[:16]), nil
}

// renderFailures maps a Work (its binding and cluster) to the render key
// of its last failed rendering. It holds only Works whose rendering fails.
type renderFailures struct {
	mu     sync.Mutex
	failed map[string]string
}

// Failed reports whether work's rendering from key failed before.
func (f *renderFailures) Failed(work, key string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.failed[work] == key
}

// Set records that work's rendering from key failed; an empty key, that
// it succeeded.
func (f *renderFailures) Set(work, key string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if key == "" {
		delete(f.failed, work)
		return
	}
	if f.failed == nil {
		f.failed = map[string]string{}
	}
	f.failed[work] = key
}

// podSecurity is the Pod Security labels of hub namespace ns, as the
// Works of its bindings carry them (AnnotationPodSecurity); empty for a
// cluster-scoped binding (ns empty), a namespace without such labels, or
// one gone.
func (r *Reconciler[T]) podSecurity(ctx context.Context, ns string) (string, error) {
	if ns == "" {
		return "", nil
	}
	n := &corev1.Namespace{}
	if err := r.client.Get(ctx, client.ObjectKey{Name: ns}, n); err != nil {
		return "", client.IgnoreNotFound(err)
	}
	return workv1alpha1.FormatPodSecurity(workv1alpha1.PodSecurityLabels(n.Labels)), nil
}

// bindingsOfNamespace enqueues the bindings of a hub namespace whose Pod
// Security labels changed: their Works carry them.
func (r *Reconciler[T]) bindingsOfNamespace(ctx context.Context, obj client.Object) []reconcile.Request {
	if obj.GetName() == "" {
		return nil
	}
	return r.bindingsIn(ctx, obj.GetName())
}

// podSecurityChanged passes namespace updates that change its Pod
// Security labels.
func podSecurityChanged() predicate.Predicate {
	return predicate.Funcs{
		CreateFunc:  func(event.CreateEvent) bool { return false },
		DeleteFunc:  func(event.DeleteEvent) bool { return false },
		GenericFunc: func(event.GenericEvent) bool { return false },
		UpdateFunc: func(e event.UpdateEvent) bool {
			return workv1alpha1.FormatPodSecurity(workv1alpha1.PodSecurityLabels(e.ObjectOld.GetLabels())) !=
				workv1alpha1.FormatPodSecurity(workv1alpha1.PodSecurityLabels(e.ObjectNew.GetLabels()))
		},
	}
}
