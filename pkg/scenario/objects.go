package scenario

import (
	"cmp"
	"encoding/json"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/interpreter"
	"github.com/shepherd-io/shepherd/pkg/placement"
	"github.com/shepherd-io/shepherd/pkg/policymatch"
	"github.com/shepherd-io/shepherd/pkg/resourceselector"
	"github.com/shepherd-io/shepherd/pkg/scheduler/framework"
)

// builder collects the documents of a scenario.
type builder struct {
	now time.Time
	// kinds reads a template's replicas and what one replica requests,
	// as the detector does when it writes the binding.
	kinds     interpreter.Interpreter
	name      string
	clusters  []framework.ClusterInfo
	workloads []*framework.Workload
	// rollouts are the workloads' rollout strategies (none: All).
	rollouts map[*framework.Workload]*policyv1alpha1.RolloutStrategy
	// policies are the PropagationPolicies, clusterPolicies the
	// ClusterPropagationPolicies, as policymatch takes them.
	policies, clusterPolicies []policyv1alpha1.PolicyObject
	templates                 []*unstructured.Unstructured
	unmatched                 []string
}

func (b *builder) addObject(apiVersion, kind string, raw []byte) error {
	switch {
	case apiVersion == clusterv1alpha1.SchemeGroupVersion.String() && kind == "Cluster":
		var c clusterv1alpha1.Cluster
		if err := json.Unmarshal(raw, &c); err != nil {
			return fmt.Errorf("Cluster: %w", err)
		}
		b.clusters = append(b.clusters, framework.ClusterInfoFromCluster(&c))
	case apiVersion == policyv1alpha1.SchemeGroupVersion.String() && kind == policyv1alpha1.KindPropagationPolicy:
		p := &policyv1alpha1.PropagationPolicy{}
		if err := decodePolicy(raw, p); err != nil {
			return fmt.Errorf("%s: %w", kind, err)
		}
		p.Namespace = cmp.Or(p.Namespace, metav1.NamespaceDefault)
		b.policies = append(b.policies, p)
	case apiVersion == policyv1alpha1.SchemeGroupVersion.String() && kind == policyv1alpha1.KindClusterPropagationPolicy:
		p := &policyv1alpha1.ClusterPropagationPolicy{}
		if err := decodePolicy(raw, p); err != nil {
			return fmt.Errorf("%s: %w", kind, err)
		}
		p.Namespace = "" // cluster-scoped: the API server drops any namespace given
		b.clusterPolicies = append(b.clusterPolicies, p)
	case apiVersion == workv1alpha1.SchemeGroupVersion.String() && (kind == "ResourceBinding" || kind == "ClusterResourceBinding"):
		var rb workv1alpha1.ResourceBinding // both kinds share the shape
		if err := json.Unmarshal(raw, &rb); err != nil {
			return fmt.Errorf("%s: %w", kind, err)
		}
		w := framework.WorkloadFromBinding(&rb, b.now)
		if kind == "ClusterResourceBinding" {
			// Only ResourceBindings carry workload affinity groups.
			w.AffinityGroup, w.AntiAffinityGroup = nil, nil
		}
		b.workloads = append(b.workloads, w)
		b.setRollout(w, rb.Spec.Rollout)
	default:
		return b.addTemplate(raw)
	}
	return nil
}

// decodePolicy reads a policy and refuses a label selector that does not
// parse: the detector would match nothing with it (and warn on the
// policy), so a plan that silently placed nothing would only hide the
// mistake.
func decodePolicy(raw []byte, p policyv1alpha1.PolicyObject) error {
	if err := json.Unmarshal(raw, p); err != nil {
		return err
	}
	for i, sel := range p.GetPropagationSpec().ResourceSelectors {
		if sel.LabelSelector == nil {
			continue
		}
		if _, err := metav1.LabelSelectorAsSelector(sel.LabelSelector); err != nil {
			return fmt.Errorf("policy %s: resourceSelectors[%d]: %w", p.GetName(), i, err)
		}
	}
	return nil
}

func (b *builder) addTemplate(raw []byte) error {
	obj := &unstructured.Unstructured{}
	if err := obj.UnmarshalJSON(raw); err != nil {
		return fmt.Errorf("%s: %w", obj.GetKind(), err)
	}
	if obj.GetName() == "" {
		return fmt.Errorf("%s %s has no metadata.name", obj.GetAPIVersion(), obj.GetKind())
	}
	obj.SetNamespace(cmp.Or(obj.GetNamespace(), metav1.NamespaceDefault))
	b.templates = append(b.templates, obj)
	return nil
}

// placeTemplates turns every template the detector would bind into a
// workload: the policy that governs it is policymatch's choice, and its
// replicas, per-replica request and components the interpreter's, as in
// the binding the detector writes.
func (b *builder) placeTemplates() error {
	for _, t := range b.templates {
		var p policyv1alpha1.PolicyObject
		if !resourceselector.ExcludedObject(t) {
			p = policymatch.Match(resourceselector.TemplateOf(t), b.policies, b.clusterPolicies)
		}
		if p == nil {
			b.unmatched = append(b.unmatched, fmt.Sprintf("%s %s/%s", t.GetKind(), t.GetNamespace(), t.GetName()))
			continue
		}
		replicas, requirements, err := b.kinds.Replicas(t)
		if err != nil {
			return err
		}
		components, err := b.kinds.Components(t)
		if err != nil {
			return err
		}
		spec := p.GetPropagationSpec()
		w := &framework.Workload{
			Namespace:  t.GetNamespace(),
			Name:       t.GetName(),
			APIVersion: t.GetAPIVersion(),
			Kind:       t.GetKind(),
			Replicas:   replicas,
			Placement:  spec.Placement.DeepCopy(),
			Failover:   spec.Failover,
			Now:        b.now,
		}
		if requirements != nil {
			w.Request = framework.ResourcesFromList(requirements.ResourceRequest)
		}
		bindingComponents := interpreter.BindingComponents(components)
		w.Components = framework.ComponentsFromSpec(bindingComponents)
		// Divided as the binding the detector writes would be.
		w.DivideComponents, w.NotDivided = placement.DividesComponents(w.Placement, bindingComponents)
		// The groups the detector would write on the template's binding.
		w.AffinityGroup, w.AntiAffinityGroup = framework.WorkloadAffinityGroups(&workv1alpha1.BindingSpec{
			WorkloadAffinityGroups: placement.WorkloadAffinityGroups(w.Placement, t.GetLabels())})
		b.workloads = append(b.workloads, w)
		b.setRollout(w, spec.Rollout)
	}
	return nil
}

func (b *builder) setRollout(w *framework.Workload, r *policyv1alpha1.RolloutStrategy) {
	if r == nil {
		return
	}
	if b.rollouts == nil {
		b.rollouts = map[*framework.Workload]*policyv1alpha1.RolloutStrategy{}
	}
	b.rollouts[w] = r
}
