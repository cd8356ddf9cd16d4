package scenario

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	clusterv1alpha1 "github.com/shepherd-io/shepherd/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/shepherd-io/shepherd/api/policy/v1alpha1"
	workv1alpha1 "github.com/shepherd-io/shepherd/api/work/v1alpha1"
	"github.com/shepherd-io/shepherd/pkg/scheduler/framework"
)

// builder collects the documents of a scenario.
type builder struct {
	now       time.Time
	name      string
	clusters  []framework.ClusterInfo
	workloads []*framework.Workload
	// rollouts are the workloads' rollout strategies (none: All).
	rollouts  map[*framework.Workload]*policyv1alpha1.RolloutStrategy
	policies  []policy
	templates []template
	unmatched []string
}

// policy is a PropagationPolicy (namespaced) or ClusterPropagationPolicy.
type policy struct {
	namespaced bool
	namespace  string
	name       string
	spec       policyv1alpha1.PropagationSpec
}

// template is a resource template and what scheduling needs of it.
type template struct {
	apiVersion, kind string
	meta             metav1.ObjectMeta
	replicas         int32
	request          framework.Resources
}

// templateDoc reads the replica count and pod template of workload kinds.
type templateDoc struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              struct {
		Replicas    *int32                  `json:"replicas"`
		Parallelism *int32                  `json:"parallelism"`
		Template    *corev1.PodTemplateSpec `json:"template"`
		corev1.PodSpec
	} `json:"spec"`
}

func (b *builder) addObject(apiVersion, kind string, raw []byte) error {
	switch {
	case apiVersion == clusterv1alpha1.SchemeGroupVersion.String() && kind == "Cluster":
		var c clusterv1alpha1.Cluster
		if err := json.Unmarshal(raw, &c); err != nil {
			return fmt.Errorf("Cluster: %w", err)
		}
		b.clusters = append(b.clusters, framework.ClusterInfoFromCluster(&c))
	case apiVersion == policyv1alpha1.SchemeGroupVersion.String() && (kind == "PropagationPolicy" || kind == "ClusterPropagationPolicy"):
		var p policyv1alpha1.PropagationPolicy // both kinds share the shape
		if err := json.Unmarshal(raw, &p); err != nil {
			return fmt.Errorf("%s: %w", kind, err)
		}
		pol := policy{namespaced: kind == "PropagationPolicy", name: p.Name, spec: p.Spec}
		if pol.namespaced {
			pol.namespace = cmp.Or(p.Namespace, metav1.NamespaceDefault)
		}
		b.policies = append(b.policies, pol)
	case apiVersion == workv1alpha1.SchemeGroupVersion.String() && (kind == "ResourceBinding" || kind == "ClusterResourceBinding"):
		var rb workv1alpha1.ResourceBinding // both kinds share the shape
		if err := json.Unmarshal(raw, &rb); err != nil {
			return fmt.Errorf("%s: %w", kind, err)
		}
		w := framework.WorkloadFromBinding(&rb, b.now)
		b.workloads = append(b.workloads, w)
		b.setRollout(w, rb.Spec.Rollout)
	default:
		return b.addTemplate(raw)
	}
	return nil
}

func (b *builder) addTemplate(raw []byte) error {
	var d templateDoc
	if err := json.Unmarshal(raw, &d); err != nil {
		return fmt.Errorf("%s: %w", d.Kind, err)
	}
	if d.Name == "" {
		return fmt.Errorf("%s %s has no metadata.name", d.APIVersion, d.Kind)
	}
	t := template{apiVersion: d.APIVersion, kind: d.Kind, meta: d.ObjectMeta}
	t.meta.Namespace = cmp.Or(t.meta.Namespace, metav1.NamespaceDefault)
	var pod *corev1.PodSpec
	switch d.APIVersion + "/" + d.Kind {
	case "apps/v1/Deployment", "apps/v1/StatefulSet", "apps/v1/ReplicaSet":
		t.replicas = ptrOr(d.Spec.Replicas, 1)
	case "batch/v1/Job":
		t.replicas = ptrOr(d.Spec.Parallelism, 1)
	case "v1/Pod":
		t.replicas, pod = 1, &d.Spec.PodSpec
	}
	if d.Spec.Template != nil && t.replicas > 0 {
		pod = &d.Spec.Template.Spec
	}
	if pod != nil {
		t.request = podRequest(pod)
	}
	b.templates = append(b.templates, t)
	return nil
}

func ptrOr(p *int32, def int32) int32 {
	if p == nil {
		return def
	}
	return *p
}

// podRequest is the pod's effective request, as kube-scheduler counts it:
// the sum over containers, raised to any larger init container request.
func podRequest(spec *corev1.PodSpec) framework.Resources {
	sum := corev1.ResourceList{}
	for _, c := range spec.Containers {
		for name, q := range c.Resources.Requests {
			cur := sum[name]
			cur.Add(q)
			sum[name] = cur
		}
	}
	for _, c := range spec.InitContainers {
		for name, q := range c.Resources.Requests {
			if cur, ok := sum[name]; !ok || q.Cmp(cur) > 0 {
				sum[name] = q
			}
		}
	}
	r := framework.ResourcesFromList(sum)
	r.Pods = 0
	return r
}

// placeTemplates turns every template selected by a policy into a workload.
func (b *builder) placeTemplates() error {
	for i := range b.templates {
		t := &b.templates[i]
		p, err := b.policyFor(t)
		if err != nil {
			return err
		}
		if p == nil {
			b.unmatched = append(b.unmatched, fmt.Sprintf("%s %s/%s", t.kind, t.meta.Namespace, t.meta.Name))
			continue
		}
		placement := p.spec.Placement
		w := &framework.Workload{
			Namespace:  t.meta.Namespace,
			Name:       t.meta.Name,
			APIVersion: t.apiVersion,
			Kind:       t.kind,
			Replicas:   t.replicas,
			Request:    t.request,
			Placement:  &placement,
			Failover:   p.spec.Failover,
			Now:        b.now,
		}
		b.workloads = append(b.workloads, w)
		b.setRollout(w, p.spec.Rollout)
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

// match ranks how a policy selects a template: 0 not at all, 1 by kind, 2
// by label selector, 3 by name.
func (p *policy) match(t *template) (int, error) {
	best := 0
	for _, s := range p.spec.ResourceSelectors {
		if s.APIVersion != t.apiVersion || s.Kind != t.kind {
			continue
		}
		ns := s.Namespace
		if p.namespaced {
			ns = p.namespace
		}
		if ns != "" && ns != t.meta.Namespace {
			continue
		}
		rank := 1
		switch {
		case s.Name != "":
			if s.Name != t.meta.Name {
				continue
			}
			rank = 3
		case s.LabelSelector != nil:
			sel, err := metav1.LabelSelectorAsSelector(s.LabelSelector)
			if err != nil {
				return 0, fmt.Errorf("policy %s: resourceSelectors: %w", p.name, err)
			}
			if !sel.Matches(labels.Set(t.meta.Labels)) {
				continue
			}
			rank = 2
		}
		best = max(best, rank)
	}
	return best, nil
}

// policyFor picks the policy that places t, or nil.
func (b *builder) policyFor(t *template) (*policy, error) {
	type choice struct {
		p    *policy
		rank int
	}
	var choices []choice
	for i := range b.policies {
		rank, err := b.policies[i].match(t)
		if err != nil {
			return nil, err
		}
		if rank > 0 {
			choices = append(choices, choice{&b.policies[i], rank})
		}
	}
	if len(choices) == 0 {
		return nil, nil
	}
	priority := func(p *policy) int32 {
		if p.spec.Priority == nil {
			return 0
		}
		return *p.spec.Priority
	}
	best := slices.MinFunc(choices, func(a, c choice) int {
		if a.p.namespaced != c.p.namespaced {
			if a.p.namespaced {
				return -1
			}
			return 1
		}
		return cmp.Or(cmp.Compare(c.rank, a.rank), cmp.Compare(priority(c.p), priority(a.p)), strings.Compare(a.p.name, c.p.name))
	})
	return best.p, nil
}
